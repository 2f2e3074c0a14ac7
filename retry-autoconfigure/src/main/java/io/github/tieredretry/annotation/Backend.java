package io.github.tieredretry.annotation;

import java.util.Locale;

/**
 * Where a retryable listener's failed messages wait for their retry: the one name of the
 * setting, in {@code @RetryableListener(backend = ...)}, in
 * {@code retry.defaults.backend} and {@code retry.policies.<name>.backend}, and in what
 * the starter reports.
 */
public enum Backend {

	/**
	 * As its policy says ({@code retry.policies.<name>.backend}, then
	 * {@code retry.defaults.backend}, {@code auto} unless set).
	 */
	INHERIT,

	/**
	 * The broker where the queue and the broker can hold the retries at the policy's
	 * delays, the tiers everywhere else; the choice and its reason are logged at startup.
	 */
	AUTO,

	/** The delay tiers, on every broker and queue type. */
	TIERS,

	/**
	 * The broker (RabbitMQ 4.3, a quorum queue with delayed retry that makes the policy's
	 * delays); startup fails, saying why and what to change, where it cannot.
	 */
	BROKER;

	/**
	 * The value as written in properties and logs.
	 * @return e.g. {@code tiers}
	 */
	public String value() {
		return name().toLowerCase(Locale.ROOT);
	}

}
