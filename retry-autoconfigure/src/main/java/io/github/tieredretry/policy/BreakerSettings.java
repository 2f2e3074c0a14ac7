package io.github.tieredretry.policy;

import java.time.Duration;

/**
 * The circuit breaker of one listener.
 *
 * @param enabled whether the listener has a breaker
 * @param failureRateThreshold the failure rate, in percent, at or above which the breaker
 * opens
 * @param slidingWindowSize how many of the latest outcomes the failure rate is computed
 * over
 * @param minimumCalls how many outcomes the window needs before the breaker may open
 * @param waitInOpenState how long the listener pauses before it tries again
 * @param probesInHalfOpenState how many messages it tries before it decides to resume or
 * pause again
 */
public record BreakerSettings(boolean enabled, float failureRateThreshold, int slidingWindowSize, int minimumCalls,
		Duration waitInOpenState, int probesInHalfOpenState) {

	/** No breaker: the built-in settings, not enabled. */
	public static final BreakerSettings DISABLED = BreakerLayer.resolve();

}
