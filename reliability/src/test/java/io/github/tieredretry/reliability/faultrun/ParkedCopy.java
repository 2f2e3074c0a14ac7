package io.github.tieredretry.reliability.faultrun;

import java.time.Instant;
import java.util.Map;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.headers.RetryHeaderValues;
import org.jspecify.annotations.Nullable;

/**
 * One copy of a message in the parking lot, as the accounting sees it.
 *
 * @param index the run's index of the message, or -1 for a message that is not the run's
 * @param reason its {@code retry-parked-reason}, or {@value #UNROUTABLE} when the broker
 * parked it
 * @param replayCount its {@code retry-replay-count}: how often it was replayed before it
 * was parked again
 * @param replayedAt its {@code retry-replayed-at} (epoch milliseconds), or 0 if it was
 * never replayed
 * @param parkedAt its {@code retry-parked-at} (epoch milliseconds), or 0 if unknown
 */
record ParkedCopy(int index, String reason, long replayCount, long replayedAt, long parkedAt) {

	/**
	 * The reason of a copy without {@code retry-parked-reason}: the broker routed it to
	 * the parking lot.
	 */
	static final String UNROUTABLE = "(no reason: unroutable)";

	static ParkedCopy of(AMQP.BasicProperties properties, int messages) {
		String messageId = properties.getMessageId();
		int index = (messageId != null) ? FaultPlans.indexOf(messageId) : -1;
		Map<String, Object> headers = (properties.getHeaders() != null) ? properties.getHeaders() : Map.of();
		Object reason = headers.get(RetryHeaders.PARKED_REASON);
		return new ParkedCopy((index < messages) ? index : -1, (reason != null) ? reason.toString() : UNROUTABLE,
				RetryHeaderValues.count(headers.get(RetryHeaders.REPLAY_COUNT)),
				epochMillis(headers.get(RetryHeaders.REPLAYED_AT)), epochMillis(headers.get(RetryHeaders.PARKED_AT)));
	}

	boolean isForeign() {
		return this.index < 0;
	}

	private static long epochMillis(@Nullable Object value) {
		Instant at = RetryHeaderValues.epochMillis(value);
		return (at != null) ? at.toEpochMilli() : 0;
	}

}
