package io.github.tieredretry.sample;

import java.time.Duration;
import java.util.List;

import io.github.tieredretry.event.MessageParkedEvent;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.policy.ParkedReason;
import io.github.tieredretry.test.RetryOutcomes;
import io.github.tieredretry.test.TieredRetryTest;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sample's demo, end to end against the broker of application.yml (localhost:5672, or
 * SPRING_RABBITMQ_HOST/PORT/USERNAME/PASSWORD), with short test tiers: healthy orders are
 * paid, flaky ones after two retries, and the never-succeeding, fraudulent and malformed
 * ones are parked for the right reason.
 * <p>
 * Queues and tiers of its own, deleted afterwards, so that it can share a broker with
 * other tests.
 */
@SpringBootTest(properties = { "server.port=0", "sample.demo.enabled=false",
		"sample.orders-queue=" + SampleApplicationIntegrationTests.ORDERS,
		"retry.parking-lot=" + SampleApplicationIntegrationTests.PARKING_LOT,
		"retry.policies.payments.delays=157ms, 283ms" })
@TieredRetryTest(tiers = { "157ms", "283ms" })
@DirtiesContext
class SampleApplicationIntegrationTests {

	static final String ORDERS = "sample-test.orders";

	static final String PARKING_LOT = "sample-test.parking-lot";

	static final String RUN = "test";

	@Autowired
	RetryOutcomes outcomes;

	@Autowired
	OrderLedger ledger;

	@Autowired
	RabbitTemplate rabbit;

	@Autowired
	ParkingLotService parkingLot;

	@Test
	void demoOrdersArePaidOrParkedForTheRightReason() {
		new DemoOrders(this.rabbit, ORDERS).publish(RUN);

		MessageParkedEvent broke = this.outcomes.awaitParked("test-15");
		assertThat(broke.reason()).isEqualTo(ParkedReason.EXHAUSTED);
		assertThat(broke.retryCount()).isEqualTo(3);
		assertThat(this.outcomes.awaitParked("test-16").reason()).isEqualTo(ParkedReason.NOT_RETRYABLE);
		assertThat(this.outcomes.awaitParked("test-17").reason()).isEqualTo(ParkedReason.NOT_RETRYABLE);
		assertThat(this.outcomes.awaitRecovered("test-13").retryCount()).isEqualTo(2);
		assertThat(this.outcomes.awaitRecovered("test-14").retryCount()).isEqualTo(2);
		// The healthy ones raise no event: paid on their first attempt.
		await().atMost(Duration.ofSeconds(10)).until(() -> this.ledger.paidCount() == 14);
		// Only the orders queue's: the tiers' alternate exchange is shared by every
		// application on the vhost, and may route another test's unroutable retry into
		// this parking lot too.
		assertThat(this.parkingLot.peek(ORDERS, 20).messages()).hasSize(3);
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class DeleteTestQueues {

		@Bean
		DisposableBean deleteSampleTestQueues(AmqpAdmin admin) {
			// At context close, after the listener containers stopped: nothing declares
			// them again.
			return () -> List.of(ORDERS, PARKING_LOT, "retry.delay.157ms", "retry.delay.283ms")
				.forEach(admin::deleteQueue);
		}

	}

}
