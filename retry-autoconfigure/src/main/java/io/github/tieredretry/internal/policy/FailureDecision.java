package io.github.tieredretry.internal.policy;

import java.time.Duration;
import java.time.Instant;

import io.github.tieredretry.policy.Jitter;
import io.github.tieredretry.policy.ParkedReason;
import io.github.tieredretry.policy.RetryAfter;

/**
 * What to do with a message whose listener failed: send it through a delay tier, or park
 * it.
 */
public sealed interface FailureDecision permits FailureDecision.Retry, FailureDecision.Park {

	/**
	 * Retry later through a tier.
	 *
	 * @param retryNumber the retry this schedules (the listener sees it as
	 * {@code retry-count})
	 * @param delay the delay before this retry: the policy's, drawn with its jitter
	 * ({@link Jitter}), exact for any backend that holds the message (the tiers serve it
	 * late by at most the smallest tier)
	 * @param tier the first tier that serves it (at least {@code delay}, or a shorter
	 * tier when it is composed of several hops)
	 * @param due when the listener may be invoked again, never earlier: the failure's
	 * time plus {@code delay}
	 * @param firstFailure when the first attempt failed
	 * @param chosen whether the failure chose the delay ({@link RetryAfter}) rather than
	 * the policy
	 */
	record Retry(long retryNumber, Duration delay, Duration tier, Instant due, Instant firstFailure,
			boolean chosen) implements FailureDecision {

		/**
		 * A retry after the policy's delay.
		 * @param retryNumber the retry this schedules
		 * @param delay the delay before this retry
		 * @param tier the first tier that serves it
		 * @param due when the listener may be invoked again
		 * @param firstFailure when the first attempt failed
		 */
		public Retry(long retryNumber, Duration delay, Duration tier, Instant due, Instant firstFailure) {
			this(retryNumber, delay, tier, due, firstFailure, false);
		}

	}

	/**
	 * Park in the parking lot.
	 *
	 * @param reason why
	 * @param firstFailure when the first attempt failed
	 */
	record Park(ParkedReason reason, Instant firstFailure) implements FailureDecision {
	}

}
