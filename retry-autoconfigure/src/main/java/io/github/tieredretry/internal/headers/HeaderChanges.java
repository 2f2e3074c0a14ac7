package io.github.tieredretry.internal.headers;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.policy.FailureDecision;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.policy.ParkedReason;

/**
 * The header edits for one forward: headers to set and headers to remove. Every other
 * header of the message is kept as received.
 *
 * @param set headers to add or overwrite
 * @param remove headers to drop
 */
public record HeaderChanges(Map<String, Object> set, Set<String> remove) {

	// The stack trace of an earlier failure must not outlive it: removed, then set again
	// when this failure has one.
	private static final Set<String> PARKING_HEADERS = Set.of(RetryHeaders.PARKED_REASON, RetryHeaders.PARKED_AT,
			RetryHeaders.STACK_TRACE);

	private static final Set<String> SCHEDULING_HEADERS = Set.of(RetryHeaders.DUE, RetryHeaders.TIER,
			RetryHeaders.STACK_TRACE);

	public HeaderChanges {
		set = Map.copyOf(set);
		remove = Set.copyOf(remove);
	}

	/**
	 * Apply the edits to a copy of the given headers.
	 * @param headers the received headers
	 * @return the headers to publish
	 */
	public Map<String, Object> applyTo(Map<String, ?> headers) {
		Map<String, Object> result = new LinkedHashMap<>(headers);
		result.keySet().removeAll(this.remove);
		result.putAll(this.set);
		return result;
	}

	/**
	 * Edits for a message scheduled for a retry.
	 * @param queue the queue that failed
	 * @param retry the decision
	 * @param failure what failed
	 * @return the edits
	 */
	public static HeaderChanges forRetry(String queue, FailureDecision.Retry retry, FailureDetails failure) {
		Map<String, Object> set = failureHeaders(queue, retry.retryNumber(), retry.firstFailure(), failure);
		set.put(RetryHeaders.DUE, retry.due().toEpochMilli());
		set.put(RetryHeaders.TIER, TierLadder.nameOf(retry.tier()));
		return new HeaderChanges(set, PARKING_HEADERS);
	}

	/**
	 * Edits for a message that arrived before its due time and goes through a tier again.
	 * Only the tier changes: count, due time and failure details stay as they are.
	 * @param tier the tier to wait in
	 * @return the edits
	 */
	public static HeaderChanges forHop(Duration tier) {
		return new HeaderChanges(Map.of(RetryHeaders.TIER, TierLadder.nameOf(tier)), Set.of());
	}

	/**
	 * Edits for a message going to the parking lot.
	 * @param queue the queue that failed
	 * @param retries retries made so far
	 * @param park the decision
	 * @param failure what failed
	 * @param parkedAt when
	 * @return the edits
	 */
	public static HeaderChanges forPark(String queue, long retries, FailureDecision.Park park, FailureDetails failure,
			Instant parkedAt) {
		Map<String, Object> set = failureHeaders(queue, retries, park.firstFailure(), failure);
		set.put(RetryHeaders.PARKED_REASON, park.reason().value());
		set.put(RetryHeaders.PARKED_AT, parkedAt.toEpochMilli());
		return new HeaderChanges(set, SCHEDULING_HEADERS);
	}

	private static Map<String, Object> failureHeaders(String queue, long retries, Instant firstFailure,
			FailureDetails failure) {
		Map<String, Object> set = new LinkedHashMap<>();
		set.put(RetryHeaders.COUNT, retries);
		set.put(RetryHeaders.QUEUE, queue);
		set.put(RetryHeaders.FIRST_FAILURE, firstFailure.toEpochMilli());
		set.put(RetryHeaders.EXCEPTION, failure.exceptionClass());
		set.put(RetryHeaders.ERROR, failure.error());
		if (failure.stackTrace() != null) {
			set.put(RetryHeaders.STACK_TRACE, failure.stackTrace());
		}
		return set;
	}

	/**
	 * The reason a parked message was parked: its header, or
	 * {@link ParkedReason#UNROUTABLE} for a message the broker routed to the parking lot
	 * because its work queue no longer existed.
	 * @param headers the parked message's headers
	 * @return the reason
	 */
	public static ParkedReason parkedReasonOf(Map<String, ?> headers) {
		ParkedReason reason = ParkedReason.fromValue(headers.get(RetryHeaders.PARKED_REASON));
		return (reason != null) ? reason : ParkedReason.UNROUTABLE;
	}

}
