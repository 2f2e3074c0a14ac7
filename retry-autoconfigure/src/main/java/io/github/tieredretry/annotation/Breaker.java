package io.github.tieredretry.annotation;

/**
 * Whether a retryable listener has a circuit breaker that pauses it while its failures
 * spike.
 */
public enum Breaker {

	/**
	 * As its policy says ({@code retry.policies.<name>.breaker.enabled}, then
	 * {@code retry.defaults.breaker.enabled}).
	 */
	INHERIT,

	/** A breaker, with the settings of its policy. */
	ON,

	/** No breaker, whatever its policy says. */
	OFF

}
