package io.github.tieredretry.policy;

import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * Thrown by a retryable listener that knows when its message may succeed: the message is
 * retried after that delay, or at that time, instead of after the policy's delay (see
 * {@link RetryAfter} for the rules). Found anywhere in the listener's exception's cause
 * chain. A failure carrying one is retryable unless a {@code RetryFailureClassifier} or
 * the policy's {@code no-retry-on} says otherwise, whatever {@code retry-on} lists.
 */
public class RetryAfterException extends RuntimeException {

	private final RetryAfter retryAfter;

	/**
	 * Retry after a delay.
	 * @param delay the delay
	 * @param message what failed
	 */
	public RetryAfterException(Duration delay, String message) {
		this(RetryAfter.of(delay), message, null);
	}

	/**
	 * Retry at a time.
	 * @param time the time, never earlier
	 * @param message what failed
	 */
	public RetryAfterException(Instant time, String message) {
		this(RetryAfter.at(time), message, null);
	}

	/**
	 * Retry as the given retry-after says.
	 * @param retryAfter when
	 * @param message what failed
	 * @param cause the underlying failure, or {@code null}
	 */
	public RetryAfterException(RetryAfter retryAfter, String message, @Nullable Throwable cause) {
		super(message, cause);
		this.retryAfter = retryAfter;
	}

	/**
	 * When to retry.
	 * @return the retry-after
	 */
	public RetryAfter retryAfter() {
		return this.retryAfter;
	}

	/**
	 * The retry-after of the first {@link RetryAfterException} in a cause chain.
	 * @param failure the failure
	 * @return its retry-after, or {@code null} when the chain holds none
	 */
	public static @Nullable RetryAfter findIn(Throwable failure) {
		Throwable current = failure;
		for (int depth = 0; current != null && depth < 64; depth++) {
			if (current instanceof RetryAfterException retryAfterException) {
				return retryAfterException.retryAfter;
			}
			current = (current.getCause() != current) ? current.getCause() : null;
		}
		return null;
	}

}
