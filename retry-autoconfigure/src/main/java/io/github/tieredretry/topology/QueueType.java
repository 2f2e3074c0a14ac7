package io.github.tieredretry.topology;

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
	QUORUM

}
