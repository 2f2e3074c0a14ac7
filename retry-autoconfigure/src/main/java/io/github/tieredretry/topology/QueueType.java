package io.github.tieredretry.topology;

import java.util.Locale;

/**
 * The type of the tier queues and the parking lot.
 */
public enum QueueType {

	/**
	 * Classic queues: the lightest, but dead-lettering from a tier is not confirmed
	 * inside the broker, so a retry that leaves its tier while the broker stops or
	 * crashes can be lost.
	 */
	CLASSIC,

	/**
	 * Quorum queues (RabbitMQ 3.10+), the default: replicated in a cluster, and tiers
	 * dead-letter with {@code at-least-once}
	 * ({@code x-dead-letter-strategy=at-least-once}, {@code x-overflow=reject-publish}).
	 */
	QUORUM;

	/**
	 * The type as written in {@code retry.queue-type} and in RabbitMQ's
	 * {@code x-queue-type}.
	 * @return {@code classic} or {@code quorum}
	 */
	@Override
	public String toString() {
		return name().toLowerCase(Locale.ROOT);
	}

}
