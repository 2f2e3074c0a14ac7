package io.github.tieredretry.topology;

import java.util.Locale;

/**
 * The type of the tier queues and the parking lot.
 */
public enum QueueType {

	/** Classic queues: the lightest, but dead-lettering from a tier is not confirmed inside the broker. */
	CLASSIC,

	/**
	 * Quorum queues (RabbitMQ 3.10+): replicated, and tiers dead-letter with {@code at-least-once}
	 * ({@code x-dead-letter-strategy=at-least-once}, {@code x-overflow=reject-publish}).
	 */
	QUORUM;

	/**
	 * The type as written in {@code retry.queue-type} and in RabbitMQ's {@code x-queue-type}.
	 * @return {@code classic} or {@code quorum}
	 */
	@Override
	public String toString() {
		return name().toLowerCase(Locale.ROOT);
	}

}
