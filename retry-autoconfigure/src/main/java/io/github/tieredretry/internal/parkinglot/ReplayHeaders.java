package io.github.tieredretry.internal.parkinglot;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.headers.RetryHeaderValues;

/**
 * The headers of a replayed message: as parked, without the headers of its previous retry
 * cycle, with {@code retry-count} 0 and the replay recorded.
 */
final class ReplayHeaders {

	/**
	 * Headers that describe the previous retry cycle; a replayed message starts a fresh
	 * one. {@code retry-original-expiration} is kept: the message stays without
	 * expiration.
	 */
	private static final Set<String> RESET_ON_REPLAY = Set.of(RetryHeaders.COUNT, RetryHeaders.QUEUE, RetryHeaders.DUE,
			RetryHeaders.FIRST_FAILURE, RetryHeaders.EXCEPTION, RetryHeaders.ERROR, RetryHeaders.STACK_TRACE,
			RetryHeaders.TIER, RetryHeaders.PARKING_LOT, RetryHeaders.PARKED_REASON, RetryHeaders.PARKED_AT);

	private ReplayHeaders() {
	}

	/**
	 * The properties to publish a parked message with.
	 * @param parked the parked message's properties
	 * @param now the time of the replay
	 * @return the properties
	 */
	static AMQP.BasicProperties replayProperties(AMQP.BasicProperties parked, Instant now) {
		Map<String, Object> headers = new LinkedHashMap<>(ParkedMessages.headers(parked));
		long replays = RetryHeaderValues.count(headers.get(RetryHeaders.REPLAY_COUNT));
		headers.keySet().removeAll(RESET_ON_REPLAY);
		headers.keySet().removeAll(RetryHeaders.BROKER_DELIVERY_COUNTS);
		// Explicitly 0 rather than absent, so that nothing derives a count from the
		// broker's x-death.
		headers.put(RetryHeaders.COUNT, 0L);
		headers.put(RetryHeaders.REPLAY_COUNT, replays + 1);
		headers.put(RetryHeaders.REPLAYED_AT, now.toEpochMilli());
		return parked.builder().headers(headers).build();
	}

}
