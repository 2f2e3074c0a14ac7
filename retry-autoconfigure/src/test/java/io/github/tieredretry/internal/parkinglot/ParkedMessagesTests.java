package io.github.tieredretry.internal.parkinglot;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.GetResponse;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.parkinglot.ParkedMessage;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ParkedMessages}: what the view of a parked message shows.
 */
class ParkedMessagesTests {

	private static final Instant PARKED_AT = Instant.parse("2026-11-22T06:00:00Z");

	@Test
	void parkedMessageIsDescribedFromItsPropertiesAndRetryHeaders() {
		Map<String, Object> headers = new LinkedHashMap<>();
		headers.put(RetryHeaders.QUEUE, "orders");
		headers.put(RetryHeaders.COUNT, 3L);
		headers.put(RetryHeaders.PARKED_REASON, "exhausted");
		headers.put(RetryHeaders.PARKED_AT, PARKED_AT.toEpochMilli());
		headers.put(RetryHeaders.FIRST_FAILURE, PARKED_AT.minusSeconds(70).toEpochMilli());
		headers.put(RetryHeaders.EXCEPTION, "java.lang.IllegalStateException");
		headers.put(RetryHeaders.ERROR, "inventory service down");
		headers.put(RetryHeaders.REPLAY_COUNT, 2);
		headers.put("tenant", "acme");
		AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().messageId("m-1")
			.contentType("application/json")
			.headers(headers)
			.build();

		ParkedMessage message = ParkedMessages.describe(response(properties, "{\"order\":42}".getBytes()));

		assertThat(message.messageId()).isEqualTo("m-1");
		assertThat(message.originQueue()).isEqualTo("orders");
		assertThat(message.retryCount()).isEqualTo(3);
		assertThat(message.parkedReason()).isEqualTo("exhausted");
		assertThat(message.parkedAt()).isEqualTo(PARKED_AT);
		assertThat(message.firstFailure()).isEqualTo(PARKED_AT.minusSeconds(70));
		assertThat(message.exception()).isEqualTo("java.lang.IllegalStateException");
		assertThat(message.error()).isEqualTo("inventory service down");
		assertThat(message.replays()).isEqualTo(2);
		assertThat(message.contentType()).isEqualTo("application/json");
		assertThat(message.bodySize()).isEqualTo(12);
		assertThat(message.bodyPreview()).isEqualTo("{\"order\":42}");
		assertThat(message.stackTrace()).isNull();
		assertThat(message.headers()).containsEntry("tenant", "acme").containsEntry(RetryHeaders.COUNT, "3");
	}

	@Test
	void messageTheBrokerParkedBecauseItsQueueWasGoneIsUnroutable() {
		AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder()
			.headers(Map.of(RetryHeaders.QUEUE, "orders", RetryHeaders.COUNT, 1L))
			.build();

		ParkedMessage message = ParkedMessages.describe(response(properties, new byte[0]));

		assertThat(message.parkedReason()).isEqualTo("unroutable");
		assertThat(message.parkedAt()).isNull();
		assertThat(message.bodyPreview()).isEmpty();
	}

	@Test
	void stackTraceIsShownApartAndLongHeaderValuesAreCut() {
		Map<String, Object> headers = new LinkedHashMap<>();
		headers.put(RetryHeaders.STACK_TRACE, "java.lang.IllegalStateException: down\n\tat Orders.on(Orders.java:1)");
		headers.put("huge", "x".repeat(5000));
		AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().headers(headers).build();

		ParkedMessage message = ParkedMessages.describe(response(properties, new byte[0]));

		assertThat(message.stackTrace()).startsWith("java.lang.IllegalStateException: down");
		assertThat(message.headers()).doesNotContainKey(RetryHeaders.STACK_TRACE);
		assertThat(message.headers().get("huge"))
			.hasSize(ParkedMessages.MAX_HEADER_LENGTH + BodyPreview.CUT_MARK.length())
			.endsWith(BodyPreview.CUT_MARK);
	}

	@Test
	void messageWithoutHeadersOrWithForeignValuesIsDescribedWithoutFailing() {
		ParkedMessage bare = ParkedMessages.describe(response(new AMQP.BasicProperties(), null));
		AMQP.BasicProperties foreign = new AMQP.BasicProperties.Builder()
			.headers(Map.of(RetryHeaders.QUEUE, "", RetryHeaders.COUNT, "lots", RetryHeaders.PARKED_AT, -5L))
			.build();
		ParkedMessage garbled = ParkedMessages.describe(response(foreign, new byte[0]));

		assertThat(bare.originQueue()).isNull();
		assertThat(bare.retryCount()).isZero();
		assertThat(bare.bodySize()).isZero();
		assertThat(bare.headers()).isEmpty();
		assertThat(garbled.originQueue()).as("an empty queue name names no queue").isNull();
		assertThat(garbled.retryCount()).isZero();
		assertThat(garbled.parkedAt()).isNull();
	}

	@Test
	void messagesThatFailedAlikeShareAGroupAndOthersDoNot() {
		ParkedMessage first = described("orders", "java.lang.IllegalStateException");
		ParkedMessage second = described("orders", "java.lang.IllegalStateException");
		ParkedMessage otherQueue = described("payments", "java.lang.IllegalStateException");
		ParkedMessage otherException = described("orders", "java.io.IOException");

		assertThat(first.group()).isEqualTo(second.group())
			.isNotEqualTo(otherQueue.group())
			.isNotEqualTo(otherException.group());
	}

	private static ParkedMessage described(String queue, String exception) {
		AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder()
			.headers(Map.of(RetryHeaders.QUEUE, queue, RetryHeaders.PARKED_REASON, "exhausted", RetryHeaders.EXCEPTION,
					exception, RetryHeaders.ERROR, "failed"))
			.build();
		return ParkedMessages.describe(response(properties, null));
	}

	private static GetResponse response(AMQP.BasicProperties properties, byte[] body) {
		return new GetResponse(new Envelope(1, false, "", "retry.parking-lot"), properties, body, 0);
	}

}
