package io.github.tieredretry.internal.delayedsend;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.policy.TierLadder;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A delayed send's properties through the tiers: persistent, without expiration or extra
 * routing keys while it waits, and given back exactly as sent.
 */
class ScheduledPropertiesTests {

	static final Instant DUE = Instant.parse("2026-11-28T12:00:00Z");

	static final ScheduledProperties.Target TARGET = new ScheduledProperties.Target("orders", "order.reminder", DUE);

	@Test
	void waitsPersistentWithoutExpirationOrExtraRoutingKeys() {
		AMQP.BasicProperties entering = ScheduledProperties.entering(sent(), TARGET);

		assertThat(entering.getDeliveryMode()).isEqualTo(2);
		assertThat(entering.getExpiration()).isNull();
		assertThat(entering.getHeaders()).doesNotContainKeys("CC", "BCC")
			.containsEntry(RetryHeaders.SEND_EXCHANGE, "orders")
			.containsEntry(RetryHeaders.SEND_ROUTING_KEY, "order.reminder")
			.containsEntry(RetryHeaders.DUE, DUE.toEpochMilli());
		assertThat(ScheduledProperties.targetOf(entering)).isEqualTo(TARGET);
	}

	@Test
	void isGivenBackAsSentWithoutWhatTheTiersAdded() {
		AMQP.BasicProperties entering = ScheduledProperties.entering(sent(), TARGET);
		AMQP.BasicProperties hop = ScheduledProperties.hop(entering, Duration.ofSeconds(5), "instance@1");
		Map<String, Object> deadLettered = new LinkedHashMap<>(hop.getHeaders());
		deadLettered.put("x-death", List.of(Map.of("queue", "retry.delay.5s")));
		deadLettered.put("x-first-death-queue", "retry.delay.5s");
		deadLettered.put("x-last-death-reason", "expired");
		deadLettered.put(RetryHeaders.BROKER_DELIVERY_COUNT, 1);
		deadLettered.put(RetryHeaders.PARKING_LOT, "retry.parking-lot.orders");

		AMQP.BasicProperties asSent = ScheduledProperties.asSent(hop.builder().headers(deadLettered).build());

		assertThat(asSent).usingRecursiveComparison().isEqualTo(sent());
	}

	@Test
	void aDueTimeBetweenMillisecondsIsRoundedUpNeverDown() {
		Instant between = Instant.parse("2026-11-28T12:00:00.000900Z");

		assertThat(ScheduledProperties.dueAt(between)).isEqualTo(Instant.parse("2026-11-28T12:00:00.001Z"));
		assertThat(ScheduledProperties.dueAt(DUE)).isEqualTo(DUE);
		assertThat(ScheduledProperties
			.targetOf(ScheduledProperties.entering(sent(),
					new ScheduledProperties.Target("orders", "key", ScheduledProperties.dueAt(between))))
			.due()).isAfterOrEqualTo(between);
	}

	@Test
	void aTransientMessageWithoutDeliveryModeStaysWithout() {
		AMQP.BasicProperties sent = new AMQP.BasicProperties.Builder().headers(Map.of()).build();

		AMQP.BasicProperties asSent = ScheduledProperties.asSent(ScheduledProperties.entering(sent, TARGET));

		assertThat(asSent.getDeliveryMode()).isNull();
		assertThat(asSent.getHeaders()).isEmpty();
	}

	@Test
	void aParkedOneNamesItsScheduledQueueAndKeepsItsTarget() {
		AMQP.BasicProperties parked = ScheduledProperties.parked(
				ScheduledProperties.hop(ScheduledProperties.entering(sent(), TARGET), Duration.ofSeconds(5), "i@1"),
				"retry.scheduled.orders", "exchange 'orders' does not exist", DUE);

		assertThat(parked.getHeaders()).containsEntry(RetryHeaders.QUEUE, "retry.scheduled.orders")
			.containsEntry(RetryHeaders.PARKED_REASON, "unroutable")
			.containsEntry(RetryHeaders.SEND_EXCHANGE, "orders")
			.doesNotContainKeys(RetryHeaders.TIER, RetryHeaders.SEND_HOP);
		assertThat(ScheduledProperties.tierOf(parked, TierLadder.of(List.of(Duration.ofSeconds(5))))).isNull();
	}

	private static AMQP.BasicProperties sent() {
		Map<String, Object> headers = new LinkedHashMap<>();
		headers.put("tenant", "acme");
		headers.put("CC", List.of("audit"));
		headers.put("BCC", List.of("archive"));
		return new AMQP.BasicProperties.Builder().contentType("application/json")
			.messageId("m-1")
			.expiration("60000")
			.deliveryMode(1)
			.priority(4)
			.headers(headers)
			.build();
	}

}
