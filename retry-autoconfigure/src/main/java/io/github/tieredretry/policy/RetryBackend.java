package io.github.tieredretry.policy;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * Where a failed message waits for its retry.
 */
public enum RetryBackend {

	/**
	 * The broker where the queue and the broker allow it ({@link #BROKER}), the tiers
	 * everywhere else.
	 */
	AUTO,

	/**
	 * Republished, with publisher confirms, to a delay tier that dead-letters it back:
	 * any broker from 3.10, any queue type, any delays.
	 */
	TIERS,

	/**
	 * Given back to its own queue with {@code basic.reject}, for the queue to deliver it
	 * again after its delayed-retry delay (RabbitMQ 4.3, quorum queues with
	 * {@code x-delayed-retry-type} {@code failed} or {@code all}): no republish and no
	 * tier queue.
	 */
	BROKER;

	/**
	 * The value as written in properties and shown by the endpoint.
	 * @return e.g. {@code tiers}
	 */
	public String value() {
		return name().toLowerCase(Locale.ROOT);
	}

	/**
	 * Read a value written in properties.
	 * @param value e.g. {@code broker}, in any case
	 * @return the backend, or {@code null} when the value names none
	 */
	public static @Nullable RetryBackend parse(String value) {
		for (RetryBackend backend : values()) {
			if (backend.name().equalsIgnoreCase(value.trim())) {
				return backend;
			}
		}
		return null;
	}

}
