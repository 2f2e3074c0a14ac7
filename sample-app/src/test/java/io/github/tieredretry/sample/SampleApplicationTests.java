package io.github.tieredretry.sample;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import io.github.tieredretry.event.MessageParkedEvent;
import io.github.tieredretry.policy.ParkedReason;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.EventListener;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sample's demo, end to end against a real broker (with short tiers): healthy and flaky orders are
 * paid, the never-succeeding, fraudulent and malformed ones are parked for the right reason.
 */
@SpringBootTest(classes = { SampleApplication.class, SampleApplicationTests.ParkedEvents.class })
@RabbitIntegrationTest
class SampleApplicationTests {

	static final String ID = UUID.randomUUID().toString().substring(0, 8);

	static final String QUEUE = "sample-orders-" + ID;

	static final String PARKING_LOT = "sample-parking-" + ID;

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add(SampleTopology.ORDERS_QUEUE_PROPERTY, () -> QUEUE);
		registry.add("retry.parking-lot", () -> PARKING_LOT);
		registry.add("retry.tiers", () -> "200ms, 500ms");
		registry.add("retry.policies.payments.delays", () -> "200ms, 500ms");
		registry.add("server.port", () -> "0");
	}

	@Autowired
	OrderLedger ledger;

	@Autowired
	ParkedEvents parked;

	@AfterAll
	static void deleteQueues() {
		try (BrokerClient client = new BrokerClient()) {
			List.of(QUEUE, PARKING_LOT).forEach(client::deleteQueue);
		}
	}

	@Test
	void demoOrdersArePaidOrParkedForTheRightReason() {
		await().atMost(Duration.ofSeconds(30)).until(() -> this.ledger.paidCount() == 14 && this.parked.byCustomerOrder.size() == 3);
		assertThat(this.parked.byCustomerOrder.values()).containsExactlyInAnyOrder(ParkedReason.EXHAUSTED,
				ParkedReason.NOT_RETRYABLE, ParkedReason.NOT_RETRYABLE);
		try (BrokerClient client = new BrokerClient()) {
			assertThat(client.count(PARKING_LOT)).isEqualTo(3);
			assertThat(client.count(QUEUE)).isZero();
		}
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class ParkedEvents {

		final Map<String, ParkedReason> byCustomerOrder = new ConcurrentHashMap<>();

		@EventListener
		void onParked(MessageParkedEvent event) {
			this.byCustomerOrder.put(String.valueOf(event.messageId()), event.reason());
		}

		@Bean
		String parkedEventsMarker() {
			return "parked-events";
		}

	}

}
