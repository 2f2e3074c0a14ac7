package io.github.tieredretry.internal.policy;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * Where a delivered message stands in its retry cycle for the queue that is consuming it.
 *
 * @param retries retries already made (0 for a first delivery)
 * @param firstFailure when the first attempt failed, or {@code null} before any failure
 * @param due when the pending retry falls due, or {@code null} when none is pending
 */
public record RetryState(long retries, @Nullable Instant firstFailure, @Nullable Instant due) {

	/** A message that has never failed on this queue. */
	public static final RetryState FIRST_DELIVERY = new RetryState(0, null, null);

	public RetryState {
		if (retries < 0) {
			throw new IllegalArgumentException("retries must not be negative");
		}
	}

	/**
	 * Whether the message has been retried at least once.
	 * @return whether this delivery is a retry
	 */
	public boolean isRetry() {
		return this.retries > 0;
	}

}
