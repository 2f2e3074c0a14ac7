package io.github.tieredretry.internal.parkinglot;

import java.time.Instant;
import java.util.Map;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.headers.RetryHeaders;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ReplayHeaders}.
 */
class ReplayHeadersTests {

	private static final Instant NOW = Instant.parse("2026-11-22T06:00:00Z");

	@Test
	void replayedMessageStartsAFreshRetryCycleAndRecordsTheReplay() {
		Map<String, Object> headers = Map.ofEntries(Map.entry(RetryHeaders.COUNT, 3L),
				Map.entry(RetryHeaders.QUEUE, "orders"), Map.entry(RetryHeaders.DUE, 1L),
				Map.entry(RetryHeaders.FIRST_FAILURE, 2L),
				Map.entry(RetryHeaders.EXCEPTION, "java.lang.IllegalStateException"),
				Map.entry(RetryHeaders.ERROR, "down"),
				Map.entry(RetryHeaders.STACK_TRACE, "at Orders.on(Orders.java:1)"), Map.entry(RetryHeaders.TIER, "1m"),
				Map.entry(RetryHeaders.PARKED_REASON, "exhausted"), Map.entry(RetryHeaders.PARKED_AT, 3L),
				Map.entry(RetryHeaders.ORIGINAL_EXPIRATION, "60000"), Map.entry("tenant", "acme"));

		AMQP.BasicProperties replayed = ReplayHeaders.replayProperties(properties(headers), NOW);

		assertThat(replayed.getHeaders()).containsOnly(Map.entry(RetryHeaders.COUNT, 0L),
				Map.entry(RetryHeaders.REPLAY_COUNT, 1L), Map.entry(RetryHeaders.REPLAYED_AT, NOW.toEpochMilli()),
				Map.entry(RetryHeaders.ORIGINAL_EXPIRATION, "60000"), Map.entry("tenant", "acme"));
	}

	@Test
	void everyReplayCountsOnWhateverTypeTheCountHas() {
		AMQP.BasicProperties once = ReplayHeaders.replayProperties(properties(Map.of()), NOW);
		AMQP.BasicProperties twice = ReplayHeaders.replayProperties(once, NOW.plusSeconds(1));
		AMQP.BasicProperties fromText = ReplayHeaders
			.replayProperties(properties(Map.of(RetryHeaders.REPLAY_COUNT, "4")), NOW);
		AMQP.BasicProperties fromGarbage = ReplayHeaders
			.replayProperties(properties(Map.of(RetryHeaders.REPLAY_COUNT, "many")), NOW);

		assertThat(twice.getHeaders()).containsEntry(RetryHeaders.REPLAY_COUNT, 2L)
			.containsEntry(RetryHeaders.REPLAYED_AT, NOW.plusSeconds(1).toEpochMilli());
		assertThat(fromText.getHeaders()).containsEntry(RetryHeaders.REPLAY_COUNT, 5L);
		assertThat(fromGarbage.getHeaders()).containsEntry(RetryHeaders.REPLAY_COUNT, 1L);
	}

	@Test
	void propertiesOtherThanHeadersAreKept() {
		AMQP.BasicProperties parked = new AMQP.BasicProperties.Builder().messageId("m-1")
			.correlationId("c-1")
			.contentType("application/json")
			.deliveryMode(2)
			.priority(4)
			.build();

		AMQP.BasicProperties replayed = ReplayHeaders.replayProperties(parked, NOW);

		assertThat(replayed.getMessageId()).isEqualTo("m-1");
		assertThat(replayed.getCorrelationId()).isEqualTo("c-1");
		assertThat(replayed.getContentType()).isEqualTo("application/json");
		assertThat(replayed.getDeliveryMode()).isEqualTo(2);
		assertThat(replayed.getPriority()).isEqualTo(4);
		assertThat(replayed.getHeaders()).containsEntry(RetryHeaders.COUNT, 0L);
	}

	private static AMQP.BasicProperties properties(Map<String, Object> headers) {
		return new AMQP.BasicProperties.Builder().messageId("m-1").headers(headers).build();
	}

}
