package io.github.tieredretry.sample;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.tieredretry.event.MessageParkedEvent;
import io.github.tieredretry.policy.ParkedReason;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

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

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("sample");

	static final String QUEUE = queues.name("orders");

	static final String PARKING_LOT = queues.name("parking");

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


	@Test
	void demoOrdersArePaidOrParkedForTheRightReason() {
		await().atMost(Duration.ofSeconds(30)).until(() -> this.ledger.paidCount() == 14 && this.parked.byCustomerOrder.size() == 3);
		assertThat(this.parked.byCustomerOrder.values()).containsExactlyInAnyOrder(ParkedReason.EXHAUSTED,
				ParkedReason.NOT_RETRYABLE, ParkedReason.NOT_RETRYABLE);
		assertThat(queues.broker().count(PARKING_LOT)).isEqualTo(3);
		assertThat(queues.broker().count(QUEUE)).isZero();
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
