package io.github.tieredretry.internal.policy;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.random.RandomGenerator;

import io.github.tieredretry.policy.EffectiveRetryPolicy;
import io.github.tieredretry.policy.Jitter;
import io.github.tieredretry.policy.ParkedReason;
import io.github.tieredretry.policy.RetryAfter;
import org.jspecify.annotations.Nullable;

/**
 * The retry decisions for one listener, as plain functions of the message's
 * {@link RetryState}, the current time and, for a policy with jitter, a random source:
 * whether an arriving message must wait longer (hop) and what follows a failure.
 */
public final class RetryDecider {

	private final TierLadder tiers;

	private final EffectiveRetryPolicy policy;

	private final RandomGenerator random;

	/**
	 * Create the decider of a listener; a policy with jitter draws from
	 * {@link Jitter#PER_THREAD}.
	 * @param tiers the tiers
	 * @param policy the listener's policy
	 */
	public RetryDecider(TierLadder tiers, EffectiveRetryPolicy policy) {
		this(tiers, policy, Jitter.PER_THREAD);
	}

	/**
	 * Create the decider of a listener.
	 * @param tiers the tiers
	 * @param policy the listener's policy
	 * @param random where a policy with jitter draws its delays from (tests pass a seeded
	 * one)
	 */
	public RetryDecider(TierLadder tiers, EffectiveRetryPolicy policy, RandomGenerator random) {
		this.tiers = tiers;
		this.policy = policy;
		this.random = random;
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
		if (remaining.compareTo(longestWait()) > 0) {
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
	 * Decide what follows a failed attempt. A retry's delay is the policy's, drawn with
	 * its jitter ({@link Jitter}); the tiers serve that drawn delay, and the decision
	 * carries it as a plain value. The timeout is decided on the policy's delay, so that
	 * jitter never parks a message its policy would retry: a drawn delay that would fall
	 * due after the timeout is cut to it.
	 * @param state the message's retry state before this failure
	 * @param retryable whether the failure may be retried at all
	 * @param now the current time
	 * @return retry through a tier, or park
	 */
	public FailureDecision afterFailure(RetryState state, boolean retryable, Instant now) {
		return afterFailure(state, retryable, now, null);
	}

	/**
	 * Decide what follows a failed attempt whose failure may have chosen its retry's
	 * delay. A chosen delay ({@link RetryAfter}) replaces the policy's for this retry,
	 * which still counts against {@code max-retries}: without jitter unless it asks for
	 * it, cut to {@link #longestWait()}, and a retry it would put after the policy's
	 * timeout parks the message (reason {@code timeout}): retrying before the time the
	 * failure named would be in vain.
	 * @param state the message's retry state before this failure
	 * @param retryable whether the failure may be retried at all
	 * @param failedAt when the attempt failed (the current time)
	 * @param chosen the delay the failure chose, or {@code null} for the policy's
	 * @return retry through a tier, or park
	 */
	public FailureDecision afterFailure(RetryState state, boolean retryable, Instant failedAt,
			@Nullable RetryAfter chosen) {
		// Counted from the millisecond of the failure: header retry-due holds
		// milliseconds, and a finer due time, written rounded down, let its retry be
		// invoked up to a millisecond before the due time its event reported.
		Instant now = failedAt.truncatedTo(ChronoUnit.MILLIS);
		if (chosen == null || !retryable || state.retries() >= this.policy.maxRetries()) {
			return afterFailureByPolicy(state, retryable, now);
		}
		Instant firstFailure = firstFailure(state, now);
		Duration delay = chosen.delayFrom(now);
		if (chosen.jitter()) {
			delay = Jitter.draw(delay, this.policy.jitter(), this.random);
		}
		if (delay.compareTo(longestWait()) > 0) {
			delay = longestWait();
		}
		delay = toWholeMilliseconds(delay);
		Duration timeout = this.policy.timeout();
		if (timeout != null && now.plus(delay).isAfter(firstFailure.plus(timeout))) {
			return new FailureDecision.Park(ParkedReason.TIMEOUT, firstFailure);
		}
		return new FailureDecision.Retry(state.retries() + 1, delay, this.tiers.tierFor(delay), now.plus(delay),
				firstFailure, true);
	}

	/**
	 * The longest a retry may wait: the policy's longest delay (jitter included) or, for
	 * an exponential back-off, its {@code max-interval} if longer. A delay a failure
	 * chooses is cut to it, and a due time further ahead is not trusted.
	 * @return the longest wait
	 */
	public Duration longestWait() {
		Duration longest = this.policy.longestDelay();
		if (this.policy.delays().isEmpty() && this.policy.maxRetries() > 0
				&& this.policy.maxInterval().compareTo(longest) > 0) {
			return this.policy.maxInterval();
		}
		return longest;
	}

	private FailureDecision afterFailureByPolicy(RetryState state, boolean retryable, Instant now) {
		Instant firstFailure = firstFailure(state, now);
		if (!retryable) {
			return new FailureDecision.Park(ParkedReason.NOT_RETRYABLE, firstFailure);
		}
		if (state.retries() >= this.policy.maxRetries()) {
			return new FailureDecision.Park(ParkedReason.EXHAUSTED, firstFailure);
		}
		long retryNumber = state.retries() + 1;
		Duration policyDelay = this.policy.delayBeforeRetry(retryNumber);
		Duration timeout = this.policy.timeout();
		Instant deadline = (timeout != null) ? firstFailure.plus(timeout) : null;
		if (deadline != null && now.plus(policyDelay).isAfter(deadline)) {
			return new FailureDecision.Park(ParkedReason.TIMEOUT, firstFailure);
		}
		Duration delay = toWholeMilliseconds(Jitter.draw(policyDelay, this.policy.jitter(), this.random));
		if (deadline != null && now.plus(delay).isAfter(deadline)) {
			delay = Duration.between(now, deadline);
		}
		return new FailureDecision.Retry(retryNumber, delay, this.tiers.tierFor(delay), now.plus(delay), firstFailure);
	}

	// Rounded up, as header retry-due holds milliseconds and a retry is never early.
	private static Duration toWholeMilliseconds(Duration delay) {
		Duration millis = delay.truncatedTo(ChronoUnit.MILLIS);
		return millis.equals(delay) ? delay : millis.plusMillis(1);
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
