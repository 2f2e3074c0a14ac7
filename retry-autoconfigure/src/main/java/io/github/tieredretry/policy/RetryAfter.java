package io.github.tieredretry.policy;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * When a failed message may be retried, as the failure says: a downstream's
 * {@code Retry-After}, a rate limit's reset time. It replaces the policy's delay for that
 * one retry, which still counts as a retry; the policy's longest delay bounds it (a
 * longer one is cut to it), a retry it would put after the policy's {@code timeout} parks
 * the message (reason {@code timeout}), and the policy's jitter applies only when asked
 * ({@link #withJitter()}).
 * <p>
 * Throw a {@link RetryAfterException} carrying one, or map any exception to one with a
 * {@code RetryAfterResolver} bean.
 */
public final class RetryAfter {

	private final @Nullable Duration delay;

	private final @Nullable Instant time;

	private final boolean jitter;

	private RetryAfter(@Nullable Duration delay, @Nullable Instant time, boolean jitter) {
		this.delay = delay;
		this.time = time;
		this.jitter = jitter;
	}

	/**
	 * Retry after a delay from the failure.
	 * @param delay the delay; zero or negative retries through the smallest tier
	 * @return the retry-after
	 */
	public static RetryAfter of(Duration delay) {
		return new RetryAfter(Objects.requireNonNull(delay, "delay"), null, false);
	}

	/**
	 * Retry at a time, never earlier.
	 * @param time the time; one in the past retries through the smallest tier
	 * @return the retry-after
	 */
	public static RetryAfter at(Instant time) {
		return new RetryAfter(null, Objects.requireNonNull(time, "time"), false);
	}

	/**
	 * The same, spread by the policy's jitter, as the policy's own delays are.
	 * @return a retry-after whose delay is drawn with the policy's jitter
	 */
	public RetryAfter withJitter() {
		return new RetryAfter(this.delay, this.time, true);
	}

	/**
	 * Whether the policy's jitter applies.
	 * @return whether {@link #withJitter()} asked for it
	 */
	public boolean jitter() {
		return this.jitter;
	}

	/**
	 * The delay from a failure at the given time.
	 * @param now when the listener failed
	 * @return the delay, never negative
	 */
	public Duration delayFrom(Instant now) {
		Duration wait = (this.delay != null) ? this.delay
				: Duration.between(now, Objects.requireNonNull(this.time, "time"));
		return wait.isNegative() ? Duration.ZERO : wait;
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return other instanceof RetryAfter that && Objects.equals(this.delay, that.delay)
				&& Objects.equals(this.time, that.time) && this.jitter == that.jitter;
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.delay, this.time, this.jitter);
	}

	@Override
	public String toString() {
		return "RetryAfter[" + ((this.delay != null) ? DurationText.of(this.delay) : "at " + this.time)
				+ (this.jitter ? ", with jitter" : "") + "]";
	}

}
