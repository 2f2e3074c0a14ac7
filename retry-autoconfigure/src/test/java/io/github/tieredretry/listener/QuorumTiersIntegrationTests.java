package io.github.tieredretry.listener;

import java.time.Duration;
import java.util.Map;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.Messages;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.ScriptedListener;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Quorum tiers and parking lot: at-least-once dead-lettering from the tiers.
 * <p>
 * The tier durations are used by no other test: a classic queue of the same name on the
 * shared broker would conflict.
 */
@SpringBootTest
@RabbitIntegrationTest
class QuorumTiersIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("quorum");

	static final String ID = queues.id();

	static final String QUEUE = queues.name("work");

	static final String PARKING_LOT = queues.name("parking");

	static final String TIER = "retry.delay.310ms";

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add("test.queue", () -> QUEUE);
		registry.add("retry.queue-type", () -> "quorum");
		registry.add("retry.parking-lot", () -> PARKING_LOT);
		registry.add("retry.tiers", () -> "310ms, 730ms");
		registry.add("retry.defaults.max-retries", () -> "2");
		registry.add("retry.defaults.delays", () -> "310ms, 730ms");
	}

	@Autowired
	InvocationRecorder recorder;

	@Test
	void tiersAreQuorumQueuesWithAtLeastOnceDeadLetteringAndTheParkingLotIsAQuorumQueue() {
		Map<String, Object> tier = new java.util.LinkedHashMap<>();
		tier.put("x-message-ttl", 310);
		tier.put("x-dead-letter-exchange", "retry.return");
		tier.put("x-queue-type", "quorum");
		tier.put("x-dead-letter-strategy", "at-least-once");
		tier.put("x-overflow", "reject-publish");
		assertThat(queues.broker().declaresEquivalently(TIER, tier)).isTrue();
		// A delivery limit no peek can exhaust: RabbitMQ 4 would otherwise drop a parked
		// message after 20.
		assertThat(queues.broker()
			.declaresEquivalently(PARKING_LOT, Map.of("x-queue-type", "quorum", "x-delivery-limit", Integer.MAX_VALUE)))
			.isTrue();
		assertThat(queues.broker().declaresEquivalently(PARKING_LOT, Map.of("x-queue-type", "classic"))).isFalse();
	}

	@Test
	void messageIsRetriedThroughQuorumTiersUntilItSucceeds() {
		String id = Messages.publish(queues.broker(), "", QUEUE, "fail:2");
		await().atMost(Duration.ofSeconds(15)).until(() -> this.recorder.succeeded(id));
		assertThat(this.recorder.of(id)).extracting(InvocationRecorder.Invocation::retryCount)
			.containsExactly(0L, 1L, 2L);
		assertThat(this.recorder.gaps(id).get(0)).isGreaterThanOrEqualTo(Duration.ofMillis(310));
		assertThat(this.recorder.gaps(id).get(1)).isGreaterThanOrEqualTo(Duration.ofMillis(730));
	}

	@Test
	void exhaustedMessageIsParkedInTheQuorumParkingLot() {
		String id = Messages.publish(queues.broker(), "", QUEUE, "always");
		await().atMost(Duration.ofSeconds(15)).until(() -> queues.parkingLot(PARKING_LOT).find(id) != null);
		assertThat(queues.parkingLot(PARKING_LOT).find(id).header(RetryHeaders.PARKED_REASON)).isEqualTo("exhausted");
		assertThat(queues.parkingLot(PARKING_LOT).find(id).bodyText()).isEqualTo("always");
		assertThat(this.recorder.count(id)).isEqualTo(3);
	}

	/**
	 * Whether the queue exists with exactly these arguments: the broker refuses a
	 * redeclaration with other arguments (PRECONDITION_FAILED).
	 */

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@Bean
		InvocationRecorder invocationRecorder() {
			return new InvocationRecorder();
		}

		@Bean
		Queue workQueue() {
			return new Queue(QUEUE);
		}

		@Bean
		Listener listener(InvocationRecorder recorder) {
			return new Listener(recorder);
		}

	}

	static class Listener extends ScriptedListener {

		Listener(InvocationRecorder recorder) {
			super(recorder);
		}

		@RabbitListener(queues = "${test.queue}")
		@RetryableListener
		void onMessage(Message message) {
			run(message);
		}

	}

}
