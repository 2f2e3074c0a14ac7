package io.github.tieredretry.policy;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * One layer of retry settings in which any field may be unset ({@code null}): the
 * annotation, a named policy, or the defaults. The starter merges layers field by field.
 *
 * @param maxRetries retries after the first attempt
 * @param delays explicit delays before each retry (the last one repeats); empty or
 * {@code null} is unset
 * @param initialInterval exponential back-off: delay before the first retry
 * @param multiplier exponential back-off: factor between consecutive delays
 * @param maxInterval exponential back-off: upper bound of a delay
 * @param immediateRetries in-place retries, without delay, before the first tiered retry
 * @param timeout no retry falls due later than the first failure plus this
 * @param retryOn exception types that are retried; empty or {@code null} is unset
 * @param noRetryOn exception types that are never retried; empty or {@code null} is unset
 * @param jitter factor from 0 to 1 by which each retry's delay is spread out: drawn from
 * {@code [delay × (1 − jitter), delay × (1 + jitter)]} ({@link Jitter})
 */
public record PolicyLayer(@Nullable Integer maxRetries, @Nullable List<Duration> delays,
		@Nullable Duration initialInterval, @Nullable Double multiplier, @Nullable Duration maxInterval,
		@Nullable Integer immediateRetries, @Nullable Duration timeout,
		@Nullable List<Class<? extends Throwable>> retryOn, @Nullable List<Class<? extends Throwable>> noRetryOn,
		@Nullable Double jitter) {

	/** A layer with nothing set. */
	public static final PolicyLayer EMPTY = new PolicyLayer(null, null, null, null, null, null, null, null, null, null);

	/**
	 * The built-in defaults, used for whatever {@code retry.defaults} leaves unset: the
	 * one place where they are defined (the configuration metadata and
	 * docs/configuration-reference.md are checked against it by tests).
	 */
	public static final PolicyLayer BUILT_IN = new PolicyLayer(5, List.of(), Duration.ofSeconds(1), 2.0,
			Duration.ofHours(1), 0, null, List.of(), List.of(), 0.0);

	private static final String DURATION = "a positive duration of at most 100 years, such as '500ms', '10s' or '1h'";

	private static final String JITTER = "a factor from 0 to 1, such as 0.2 (each retry's delay drawn between 80% "
			+ "and 120% of itself), or 0 for exact delays";

	/**
	 * A layer without jitter set.
	 * @param maxRetries retries after the first attempt
	 * @param delays explicit delays before each retry
	 * @param initialInterval exponential back-off: delay before the first retry
	 * @param multiplier exponential back-off: factor between consecutive delays
	 * @param maxInterval exponential back-off: upper bound of a delay
	 * @param immediateRetries in-place retries before the first tiered retry
	 * @param timeout no retry falls due later than the first failure plus this
	 * @param retryOn exception types that are retried
	 * @param noRetryOn exception types that are never retried
	 */
	public PolicyLayer(@Nullable Integer maxRetries, @Nullable List<Duration> delays,
			@Nullable Duration initialInterval, @Nullable Double multiplier, @Nullable Duration maxInterval,
			@Nullable Integer immediateRetries, @Nullable Duration timeout,
			@Nullable List<Class<? extends Throwable>> retryOn, @Nullable List<Class<? extends Throwable>> noRetryOn) {
		this(maxRetries, delays, initialInterval, multiplier, maxInterval, immediateRetries, timeout, retryOn,
				noRetryOn, null);
	}

	/**
	 * The first value set in this layer that no retry policy accepts. These are the only
	 * rules for policy values, whether they come from properties, an annotation or code.
	 * @return what is wrong, or {@code null} when every value that is set can be used
	 */
	public @Nullable InvalidPolicyValue invalidValue() {
		if (this.maxRetries != null && this.maxRetries < 0) {
			return new InvalidPolicyValue("max-retries", this.maxRetries,
					"0 or more retries (retries after the first attempt)");
		}
		if (this.delays != null) {
			for (Duration delay : this.delays) {
				if (delay == null || delay.isNegative() || delay.compareTo(EffectiveRetryPolicy.MAX_DURATION) > 0) {
					return new InvalidPolicyValue("delays", delay,
							"delays of zero or more, each at most 100 years, such as '10s, 100s, 1h'");
				}
			}
		}
		InvalidPolicyValue interval = firstNotPositive("initial-interval", this.initialInterval);
		if (interval != null) {
			return interval;
		}
		if (this.multiplier != null && !(this.multiplier >= 1.0)) {
			return new InvalidPolicyValue("multiplier", this.multiplier,
					"a multiplier of at least 1.0 (1.0 means a fixed delay)");
		}
		interval = firstNotPositive("max-interval", this.maxInterval);
		if (interval != null) {
			return interval;
		}
		if (this.jitter != null && !(this.jitter >= 0.0 && this.jitter <= 1.0)) {
			return new InvalidPolicyValue("jitter", this.jitter, JITTER);
		}
		if (this.immediateRetries != null && this.immediateRetries < 0) {
			return new InvalidPolicyValue("immediate-retries", this.immediateRetries, "0 or more in-place retries");
		}
		return firstNotPositive("timeout", this.timeout);
	}

	private static @Nullable InvalidPolicyValue firstNotPositive(String field, @Nullable Duration value) {
		if (value != null
				&& (value.isNegative() || value.isZero() || value.compareTo(EffectiveRetryPolicy.MAX_DURATION) > 0)) {
			return new InvalidPolicyValue(field, value, DURATION);
		}
		return null;
	}

}
