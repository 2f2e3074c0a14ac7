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

	/**
	 * The settings as a user writes them, for log lines.
	 * @return {@code no breaker}, or e.g. {@code breaker[failure-rate-threshold=50%,
	 * sliding-window-size=20, minimum-calls=10, wait-in-open-state=30s,
	 * probes-in-half-open-state=3]}
	 */
	public String describe() {
		if (!this.enabled) {
			return "no breaker";
		}
		float threshold = this.failureRateThreshold;
		String percent = (threshold == Math.rint(threshold)) ? String.valueOf((int) threshold)
				: String.valueOf(threshold);
		return "breaker[failure-rate-threshold=" + percent + "%, sliding-window-size=" + this.slidingWindowSize
				+ ", minimum-calls=" + this.minimumCalls + ", wait-in-open-state="
				+ DurationText.of(this.waitInOpenState) + ", probes-in-half-open-state=" + this.probesInHalfOpenState
				+ "]";
	}

}
