package io.github.tieredretry.policy;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * One layer of retry settings in which any field may be unset ({@code null}): the annotation, a named
 * policy, or the defaults. {@link RetryPolicyResolver} merges layers field by field.
 *
 * @param maxRetries retries after the first attempt
 * @param delays explicit delays before each retry (the last one repeats); empty or {@code null} is unset
 * @param initialInterval exponential back-off: delay before the first retry
 * @param multiplier exponential back-off: factor between consecutive delays
 * @param maxInterval exponential back-off: upper bound of a delay
 * @param immediateRetries in-place retries, without delay, before the first tiered retry
 * @param timeout no retry falls due later than the first failure plus this
 * @param retryOn exception types that are retried; empty or {@code null} is unset
 * @param noRetryOn exception types that are never retried; empty or {@code null} is unset
 */
public record PolicyLayer(@Nullable Integer maxRetries, @Nullable List<Duration> delays,
		@Nullable Duration initialInterval, @Nullable Double multiplier, @Nullable Duration maxInterval,
		@Nullable Integer immediateRetries, @Nullable Duration timeout,
		@Nullable List<Class<? extends Throwable>> retryOn, @Nullable List<Class<? extends Throwable>> noRetryOn) {

	/** A layer with nothing set. */
	public static final PolicyLayer EMPTY = new PolicyLayer(null, null, null, null, null, null, null, null, null);

	/** The built-in defaults, used for whatever {@code retry.defaults} leaves unset. */
	public static final PolicyLayer BUILT_IN = new PolicyLayer(5, List.of(), Duration.ofSeconds(1), 2.0,
			Duration.ofHours(1), 0, null, List.of(), List.of());

}
