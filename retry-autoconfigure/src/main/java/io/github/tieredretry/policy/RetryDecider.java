package io.github.tieredretry.policy;

import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * The retry decisions for one listener, as plain functions of the message's
 * {@link RetryState} and the current time: whether an arriving message must wait longer
 * (hop) and what follows a failure.
 */
public final class RetryDecider {

	private final TierLadder tiers;

	private final EffectiveRetryPolicy policy;

	public RetryDecider(TierLadder tiers, EffectiveRetryPolicy policy) {
		this.tiers = tiers;
		this.policy = policy;
	}

	/**
	 * Decide whether a message that just arrived must go through a tier again before the
	 * listener may see it, which happens when its delay is not one tier but composed of
	 * several (longer than the largest tier, or between two tiers).
	 * <p>
	 * A due time further ahead than the policy's longest delay cannot come from this
	 * starter (forged or corrupt header): it is ignored so that it can never hold a
	 * message longer than its policy allows.
	 * @param state the message's retry state
	 * @param now the current time
	 * @return the tier to hop through, or {@code null} to invoke the listener now
	 */
	public @Nullable Duration tierForEarlyArrival(RetryState state, Instant now) {
		Instant due = state.due();
		if (due == null || !due.isAfter(now)) {
			return null;
		}
		Duration remaining = Duration.between(now, due);
		if (remaining.compareTo(this.policy.longestDelay()) > 0) {
			return null;
		}
		return this.tiers.tierFor(remaining);
	}

	/**
	 * The retry state of a message on the broker backend, where nothing is written into
	 * the message: its retries are the broker's count of its failed deliveries
	 * ({@code x-delivery-count}), and its first failure is estimated as now minus the
	 * policy's delays before those retries (the broker keeps no time of its own).
	 * @param failedDeliveries the broker's count
	 * @param now the current time
	 * @return the state
	 */
	public RetryState brokerHeldState(long failedDeliveries, Instant now) {
		if (failedDeliveries <= 0) {
			return RetryState.FIRST_DELIVERY;
		}
		Duration waited = Duration.ZERO;
		for (long retry = 1; retry <= Math.min(failedDeliveries, this.policy.maxRetries()); retry++) {
			waited = waited.plus(this.policy.delayBeforeRetry(retry));
		}
		return new RetryState(failedDeliveries, now.minus(waited), null);
	}

	/**
	 * The tier a message waits in when it must leave its queue for a while without a
	 * retry spent (its listener is paused): the smallest.
	 * @return the tier
	 */
	public Duration postponementTier() {
		return this.tiers.smallest();
	}

	/**
	 * Decide what follows a failed attempt.
	 * @param state the message's retry state before this failure
	 * @param retryable whether the failure may be retried at all
	 * @param now the current time
	 * @return retry through a tier, or park
	 */
	public FailureDecision afterFailure(RetryState state, boolean retryable, Instant now) {
		Instant firstFailure = firstFailure(state, now);
		if (!retryable) {
			return new FailureDecision.Park(ParkedReason.NOT_RETRYABLE, firstFailure);
		}
		if (state.retries() >= this.policy.maxRetries()) {
			return new FailureDecision.Park(ParkedReason.EXHAUSTED, firstFailure);
		}
		long retryNumber = state.retries() + 1;
		Duration delay = this.policy.delayBeforeRetry(retryNumber);
		Instant due = now.plus(delay);
		Duration timeout = this.policy.timeout();
		if (timeout != null && due.isAfter(firstFailure.plus(timeout))) {
			return new FailureDecision.Park(ParkedReason.TIMEOUT, firstFailure);
		}
		return new FailureDecision.Retry(retryNumber, delay, this.tiers.tierFor(delay), due, firstFailure);
	}

	private static Instant firstFailure(RetryState state, Instant now) {
		Instant recorded = state.firstFailure();
		// A first failure "in the future" can only be a foreign or skewed header: count
		// from now.
		return (recorded != null && !recorded.isAfter(now)) ? recorded : now;
	}

	public EffectiveRetryPolicy policy() {
		return this.policy;
	}

	public TierLadder tiers() {
		return this.tiers;
	}

}
