package io.github.tieredretry.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.core.retry.RetryPolicy;

/**
 * The retry policy in force for one listener, after merging annotation, named policy and
 * defaults.
 * <p>
 * Exception classification comes from Spring Framework's {@link RetryPolicy}
 * ({@code retry-on} as its includes, {@code no-retry-on} as its excludes, matched through
 * the cause chain). This class never sleeps and runs no back-off: it computes when a
 * retry is due, the exponential delays with the formula of Spring's
 * {@code ExponentialBackOff} in closed form (see {@link #delayBeforeRetry(long)}), and
 * the spread of each delay with a jitter of its own ({@link Jitter} says why not
 * Spring's).
 */
public final class EffectiveRetryPolicy {

	/**
	 * The longest delay, interval or timeout accepted (100 years): longer ones are typos,
	 * and would overflow the arithmetic of due times.
	 */
	public static final Duration MAX_DURATION = Duration.ofDays(36_500);

	private final int maxRetries;

	private final List<Duration> delays;

	private final Duration initialInterval;

	private final double multiplier;

	private final Duration maxInterval;

	private final int immediateRetries;

	private final @Nullable Duration timeout;

	private final List<Class<? extends Throwable>> retryOn;

	private final List<Class<? extends Throwable>> noRetryOn;

	// no-retry-on alone, matched as retryPolicy matches it.
	private final RetryPolicy noRetryOnPolicy;

	private final double jitter;

	private final RetryPolicy retryPolicy;

	private final Duration longestDelay;

	/**
	 * Create a policy with exact delays (no jitter); every argument is validated by the
	 * rules of {@link PolicyLayer#invalidValue()}.
	 * @param maxRetries retries after the first attempt, zero or more
	 * @param delays explicit delays (empty for exponential back-off), none negative
	 * @param initialInterval positive first exponential delay
	 * @param multiplier exponential factor, at least 1
	 * @param maxInterval positive upper bound of an exponential delay
	 * @param immediateRetries in-place retries before the first tiered one, zero or more
	 * @param timeout positive limit from first failure to the last due retry, or
	 * {@code null}
	 * @param retryOn retryable exception types (empty: all)
	 * @param noRetryOn non-retryable exception types (win over {@code retryOn})
	 * @throws IllegalArgumentException naming the field when a value is not usable
	 */
	public EffectiveRetryPolicy(int maxRetries, List<Duration> delays, Duration initialInterval, double multiplier,
			Duration maxInterval, int immediateRetries, @Nullable Duration timeout,
			List<Class<? extends Throwable>> retryOn, List<Class<? extends Throwable>> noRetryOn) {
		this(maxRetries, delays, initialInterval, multiplier, maxInterval, immediateRetries, timeout, retryOn,
				noRetryOn, 0.0);
	}

	/**
	 * Create a policy; every argument is validated by the rules of
	 * {@link PolicyLayer#invalidValue()}.
	 * @param maxRetries retries after the first attempt, zero or more
	 * @param delays explicit delays (empty for exponential back-off), none negative
	 * @param initialInterval positive first exponential delay
	 * @param multiplier exponential factor, at least 1
	 * @param maxInterval positive upper bound of an exponential delay
	 * @param immediateRetries in-place retries before the first tiered one, zero or more
	 * @param timeout positive limit from first failure to the last due retry, or
	 * {@code null}
	 * @param retryOn retryable exception types (empty: all)
	 * @param noRetryOn non-retryable exception types (win over {@code retryOn})
	 * @param jitter factor from 0 to 1 by which each retry's delay is spread out
	 * ({@link Jitter}); 0 keeps delays exact
	 * @throws IllegalArgumentException naming the field when a value is not usable
	 */
	public EffectiveRetryPolicy(int maxRetries, List<Duration> delays, Duration initialInterval, double multiplier,
			Duration maxInterval, int immediateRetries, @Nullable Duration timeout,
			List<Class<? extends Throwable>> retryOn, List<Class<? extends Throwable>> noRetryOn, double jitter) {
		InvalidPolicyValue invalid = new PolicyLayer(maxRetries, delays, initialInterval, multiplier, maxInterval,
				immediateRetries, timeout, null, null, jitter)
			.invalidValue();
		if (invalid != null) {
			throw new IllegalArgumentException(
					invalid.field() + " " + invalid.valueText() + " is not usable. " + invalid.fix());
		}
		this.maxRetries = maxRetries;
		this.delays = List.copyOf(delays);
		this.initialInterval = initialInterval;
		this.multiplier = multiplier;
		this.maxInterval = maxInterval;
		this.immediateRetries = immediateRetries;
		this.timeout = timeout;
		this.retryOn = List.copyOf(retryOn);
		this.noRetryOn = List.copyOf(noRetryOn);
		this.jitter = jitter;
		this.retryPolicy = RetryPolicy.builder()
			.includes(new ArrayList<>(this.retryOn))
			.excludes(new ArrayList<>(this.noRetryOn))
			.build();
		this.noRetryOnPolicy = RetryPolicy.builder().excludes(new ArrayList<>(this.noRetryOn)).build();
		this.longestDelay = computeLongestDelay();
	}

	/**
	 * Whether a failure may be retried under this policy's
	 * {@code retry-on}/{@code no-retry-on} rules (matched through the cause chain;
	 * {@code no-retry-on} wins).
	 * @param failure the listener's exception
	 * @return whether to retry
	 */
	public boolean isRetryable(Throwable failure) {
		return this.retryPolicy.shouldRetry(failure);
	}

	/**
	 * Whether the policy's {@code no-retry-on} names a failure (matched through the cause
	 * chain, as {@link #isRetryable(Throwable)} matches it), whatever {@code retry-on}
	 * says.
	 * @param failure the listener's exception
	 * @return whether {@code no-retry-on} excludes it
	 */
	public boolean isNoRetryOn(Throwable failure) {
		return !this.noRetryOnPolicy.shouldRetry(failure);
	}

	/**
	 * The policy's delay before the given retry: {@code delays[min(n, size) - 1]},
	 * otherwise {@code min(initial * multiplier^(n-1), max-interval)}. With
	 * {@link #jitter()}, the delay a retry waits is drawn around it ({@link Jitter}).
	 * @param retry the retry number, starting at 1 and at most {@link #maxRetries()}
	 * @return the delay
	 */
	public Duration delayBeforeRetry(long retry) {
		if (retry < 1) {
			throw new IllegalArgumentException("retry numbers start at 1 but was " + retry);
		}
		if (!this.delays.isEmpty()) {
			// The last delay repeats.
			return this.delays.get((int) Math.min(retry, this.delays.size()) - 1);
		}
		// Closed form rather than running an ExponentialBackOff: that rounds down to
		// whole milliseconds at every step (so 100ms * 1.005 stays 100ms forever, and
		// delays drift below the formula), and takes up to max-retries steps. Past
		// max-retries the delay stays that of the last retry.
		long n = Math.max(1, Math.min(retry, Math.max(this.maxRetries, 1)));
		double exact = this.initialInterval.toMillis() * Math.pow(this.multiplier, n - 1);
		long max = this.maxInterval.toMillis();
		return Duration.ofMillis((exact >= max) ? max : (long) exact);
	}

	/**
	 * The longest delay this policy can ask for, jitter included; a due time further
	 * ahead than this is not trusted.
	 * @return the longest delay (zero when the policy allows no retries)
	 */
	public Duration longestDelay() {
		return this.longestDelay;
	}

	// Once per policy: an early arrival, on the consumer thread, compares with it.
	private Duration computeLongestDelay() {
		if (this.maxRetries == 0) {
			return Duration.ZERO;
		}
		Duration longest = this.delays.isEmpty() ? delayBeforeRetry(this.maxRetries)
				: this.delays.subList(0, Math.min(this.delays.size(), this.maxRetries))
					.stream()
					.max(Duration::compareTo)
					.orElse(Duration.ZERO);
		return Jitter.longest(longest, this.jitter);
	}

	public int maxRetries() {
		return this.maxRetries;
	}

	public List<Duration> delays() {
		return this.delays;
	}

	public Duration initialInterval() {
		return this.initialInterval;
	}

	public double multiplier() {
		return this.multiplier;
	}

	public Duration maxInterval() {
		return this.maxInterval;
	}

	public int immediateRetries() {
		return this.immediateRetries;
	}

	public @Nullable Duration timeout() {
		return this.timeout;
	}

	public List<Class<? extends Throwable>> retryOn() {
		return this.retryOn;
	}

	public List<Class<? extends Throwable>> noRetryOn() {
		return this.noRetryOn;
	}

	/**
	 * The factor by which each retry's delay is spread out: drawn from
	 * {@code [delay × (1 − jitter), delay × (1 + jitter)]}.
	 * @return the jitter, from 0 (exact delays) to 1
	 */
	public double jitter() {
		return this.jitter;
	}

	@Override
	public String toString() {
		String backOff = this.delays.isEmpty()
				? "initial-interval=" + DurationText.of(this.initialInterval) + ", multiplier=" + this.multiplier
						+ ", max-interval=" + DurationText.of(this.maxInterval)
				: "delays=" + DurationText.of(this.delays);
		return "EffectiveRetryPolicy[max-retries=" + this.maxRetries + ", " + backOff
				+ ((this.jitter != 0) ? ", jitter=" + this.jitter : "") + ", immediate-retries=" + this.immediateRetries
				+ ((this.timeout != null) ? ", timeout=" + DurationText.of(this.timeout) : "")
				+ (this.retryOn.isEmpty() ? "" : ", retry-on=" + names(this.retryOn))
				+ (this.noRetryOn.isEmpty() ? "" : ", no-retry-on=" + names(this.noRetryOn)) + "]";
	}

	private static List<String> names(List<Class<? extends Throwable>> types) {
		return types.stream().map(Class::getName).toList();
	}

}
