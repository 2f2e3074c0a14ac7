package io.github.tieredretry.internal.forwarding;

import java.math.BigDecimal;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.LongString;
import com.rabbitmq.client.impl.LongStringHelper;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.headers.HeaderChanges;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

/**
 * Tests for {@link ForwardedProperties}.
 */
class ForwardedPropertiesTests {

	private static final HeaderChanges NO_CHANGES = new HeaderChanges(Map.of(), Set.of());

	@Test
	void everyPropertyIsKeptExceptExpirationAndDeliveryMode() {
		Date timestamp = new Date(1_748_779_200_000L);
		AMQP.BasicProperties received = new AMQP.BasicProperties.Builder().contentType("application/json")
			.contentEncoding("gzip")
			.headers(Map.of("tenant", "acme"))
			.deliveryMode(1)
			.priority(7)
			.correlationId("corr-1")
			.replyTo("replies")
			.expiration("60000")
			.messageId("msg-1")
			.timestamp(timestamp)
			.type("order.created")
			.userId("guest")
			.appId("shop")
			.clusterId("cluster-a")
			.build();
		AMQP.BasicProperties forwarded = ForwardedProperties.of(received, NO_CHANGES);
		assertThat(forwarded.getContentType()).isEqualTo("application/json");
		assertThat(forwarded.getContentEncoding()).isEqualTo("gzip");
		assertThat(forwarded.getPriority()).isEqualTo(7);
		assertThat(forwarded.getCorrelationId()).isEqualTo("corr-1");
		assertThat(forwarded.getReplyTo()).isEqualTo("replies");
		assertThat(forwarded.getMessageId()).isEqualTo("msg-1");
		assertThat(forwarded.getTimestamp()).isEqualTo(timestamp);
		assertThat(forwarded.getType()).isEqualTo("order.created");
		assertThat(forwarded.getUserId()).isEqualTo("guest");
		assertThat(forwarded.getAppId()).isEqualTo("shop");
		assertThat(forwarded.getClusterId()).isEqualTo("cluster-a");
		assertThat(forwarded.getDeliveryMode()).isEqualTo(2);
		assertThat(forwarded.getExpiration()).isNull();
		assertThat(forwarded.getHeaders()).containsEntry("tenant", "acme")
			.containsEntry(RetryHeaders.ORIGINAL_EXPIRATION, "60000")
			.hasSize(2);
	}

	@Test
	void absentPropertiesStayAbsent() {
		AMQP.BasicProperties forwarded = ForwardedProperties.of(new AMQP.BasicProperties(), NO_CHANGES);
		assertThat(forwarded).extracting(AMQP.BasicProperties::getContentType, AMQP.BasicProperties::getContentEncoding,
				AMQP.BasicProperties::getPriority, AMQP.BasicProperties::getCorrelationId,
				AMQP.BasicProperties::getReplyTo, AMQP.BasicProperties::getMessageId,
				AMQP.BasicProperties::getTimestamp, AMQP.BasicProperties::getType, AMQP.BasicProperties::getUserId,
				AMQP.BasicProperties::getAppId, AMQP.BasicProperties::getClusterId, AMQP.BasicProperties::getExpiration)
			.containsOnlyNulls();
		assertThat(forwarded.getHeaders()).isEmpty();
	}

	@Test
	void theBrokersCountsOfTheDeliveryAreNotCopiedIntoTheNewMessage() {
		Map<String, Object> headers = Map.of("tenant", "acme", RetryHeaders.BROKER_DELIVERY_COUNT, 3L,
				RetryHeaders.BROKER_ACQUIRED_COUNT, 5L);
		AMQP.BasicProperties forwarded = ForwardedProperties
			.of(new AMQP.BasicProperties.Builder().headers(headers).build(), NO_CHANGES);
		assertThat(forwarded.getHeaders()).containsEntry("tenant", "acme")
			.doesNotContainKeys(RetryHeaders.BROKER_DELIVERY_COUNT, RetryHeaders.BROKER_ACQUIRED_COUNT);
	}

	@Test
	void forwardedMessageIsPersistentWhateverItWasReceivedAs() {
		assertThat(ForwardedProperties.of(new AMQP.BasicProperties.Builder().deliveryMode(1).build(), NO_CHANGES)
			.getDeliveryMode()).isEqualTo(2);
		assertThat(ForwardedProperties.of(new AMQP.BasicProperties(), NO_CHANGES).getDeliveryMode()).isEqualTo(2);
	}

	@Test
	void headerValuesOfEveryTypeAreKeptAsTheSameObjects() {
		LongString longString = LongStringHelper.asLongString("long");
		Map<String, Object> nested = Map.of("inner", 1);
		List<Object> list = List.of("a", 2L);
		byte[] bytes = { 1, 2, 3 };
		Date date = new Date(0);
		BigDecimal decimal = new BigDecimal("12.34");
		Map<String, Object> headers = new LinkedHashMap<>();
		headers.put("long-string", longString);
		headers.put("nested", nested);
		headers.put("list", list);
		headers.put("bytes", bytes);
		headers.put("date", date);
		headers.put("decimal", decimal);
		headers.put("flag", true);
		headers.put("number", 42);
		headers.put("nothing", null);
		headers.put("x-death", List.of(Map.of("queue", "retry.delay.1s", "count", 1L)));
		AMQP.BasicProperties forwarded = ForwardedProperties
			.of(new AMQP.BasicProperties.Builder().headers(headers).build(), NO_CHANGES);
		Map<String, Object> result = forwarded.getHeaders();
		assertThat(result).containsOnlyKeys(headers.keySet());
		headers.forEach((name, value) -> assertThat(result.get(name)).as(name).isSameAs(value));
	}

	@Test
	void messageWithoutExpirationGetsNoOriginalExpirationHeader() {
		AMQP.BasicProperties forwarded = ForwardedProperties
			.of(new AMQP.BasicProperties.Builder().headers(Map.of("tenant", "acme")).build(), NO_CHANGES);
		assertThat(forwarded.getHeaders()).doesNotContainKey(RetryHeaders.ORIGINAL_EXPIRATION);
	}

	@Test
	void firstOriginalExpirationIsKept() {
		AMQP.BasicProperties received = new AMQP.BasicProperties.Builder().expiration("500")
			.headers(Map.of(RetryHeaders.ORIGINAL_EXPIRATION, "60000"))
			.build();
		AMQP.BasicProperties forwarded = ForwardedProperties.of(received, NO_CHANGES);
		assertThat(forwarded.getHeaders()).containsEntry(RetryHeaders.ORIGINAL_EXPIRATION, "60000");
		assertThat(forwarded.getExpiration()).isNull();
	}

	@Test
	void headerChangesAreApplied() {
		Map<String, Object> headers = new LinkedHashMap<>();
		headers.put("tenant", "acme");
		headers.put(RetryHeaders.PARKED_REASON, "exhausted");
		HeaderChanges changes = new HeaderChanges(Map.of(RetryHeaders.COUNT, 1L), Set.of(RetryHeaders.PARKED_REASON));
		AMQP.BasicProperties forwarded = ForwardedProperties
			.of(new AMQP.BasicProperties.Builder().headers(headers).expiration("10").build(), changes);
		assertThat(forwarded.getHeaders()).containsOnlyKeys("tenant", RetryHeaders.COUNT,
				RetryHeaders.ORIGINAL_EXPIRATION);
	}

	@Test
	void receivedPropertiesAreNotModified() {
		Map<String, Object> headers = new LinkedHashMap<>(Map.of("tenant", "acme"));
		AMQP.BasicProperties received = new AMQP.BasicProperties.Builder().headers(headers)
			.expiration("60000")
			.deliveryMode(1)
			.build();
		ForwardedProperties.of(received, new HeaderChanges(Map.of(RetryHeaders.COUNT, 1L), Set.of("tenant")));
		assertThat(received.getExpiration()).isEqualTo("60000");
		assertThat(received.getDeliveryMode()).isEqualTo(1);
		assertThat(received.getHeaders()).containsOnly(entry("tenant", "acme"));
	}

	@Test
	void foreignUserIdMovesToAHeaderBecauseTheBrokerWouldRefuseThePublish() {
		AMQP.BasicProperties received = new AMQP.BasicProperties.Builder().userId("orders-service")
			.headers(Map.of("tenant", "acme"))
			.build();
		AMQP.BasicProperties publishable = ForwardedProperties.withPublishableUserId(received, "retry-publisher");
		assertThat(publishable.getUserId()).isNull();
		assertThat(publishable.getHeaders()).containsEntry(RetryHeaders.ORIGINAL_USER_ID, "orders-service")
			.containsEntry("tenant", "acme");
	}

	@Test
	void userIdOfThePublishingUserIsKept() {
		AMQP.BasicProperties received = new AMQP.BasicProperties.Builder().userId("guest").build();
		assertThat(ForwardedProperties.withPublishableUserId(received, "guest")).isSameAs(received);
	}

	@Test
	void firstForeignUserIdIsKeptAcrossForwards() {
		AMQP.BasicProperties received = new AMQP.BasicProperties.Builder().userId("second")
			.headers(Map.of(RetryHeaders.ORIGINAL_USER_ID, "first"))
			.build();
		assertThat(ForwardedProperties.withPublishableUserId(received, "guest").getHeaders())
			.containsEntry(RetryHeaders.ORIGINAL_USER_ID, "first");
	}

	@Test
	void roughSizeIsNeverBelowTheSerialisedHeaderSoThatNoHeaderNearTheFrameLimitGoesUnmeasured() throws Exception {
		Map<String, Object> headers = new LinkedHashMap<>();
		headers.put("ascii", "x".repeat(1000));
		headers.put("multibyte", "\u00e9\u4e2d\ud83d\ude00".repeat(300));
		headers.put("number", 12345678901L);
		headers.put("list", List.of("a", "\u4e2d".repeat(50), 1, List.of("nested", Map.of("k", "v"))));
		headers.put("table", Map.of("inner", "\u00e9".repeat(100)));
		headers.put("bytes", new byte[500]);
		AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().messageId("\u4e2d".repeat(40))
			.contentType("application/json")
			.headers(headers)
			.build();
		int serialised = ((com.rabbitmq.client.impl.AMQContentHeader) properties).toFrame(0, 10).size();
		assertThat(ForwardedProperties.roughSize(properties)).isGreaterThanOrEqualTo(serialised);
	}

	@Test
	void ccAndBccAreDroppedAndTheOriginalCcKept() {
		AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder()
			.headers(Map.of("CC", List.of("audit"), "BCC", List.of("secret"), "tenant", "acme"))
			.build();
		AMQP.BasicProperties publishable = ForwardedProperties.withoutExtraRoutingKeys(properties);
		assertThat(publishable.getHeaders()).doesNotContainKeys("CC", "BCC")
			.containsEntry("tenant", "acme")
			.containsEntry("retry-original-cc", List.of("audit"));
		assertThat(ForwardedProperties.withoutExtraRoutingKeys(publishable)).isSameAs(publishable);
	}

}
