package io.github.tieredretry.reliability;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.headers.HeaderChanges;
import io.github.tieredretry.policy.ParkedReason;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.ParkingLot;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.Script;
import io.github.tieredretry.testsupport.ScriptedListener;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Queues of the retry topology, or a work queue, deleted (or replaced) while the
 * application runs: forwarding declares what is missing and carries on, or refuses and
 * keeps the message; a retry whose work queue is gone ends in the parking lot.
 */
@SpringBootTest
@RabbitIntegrationTest
@DirtiesContext
class QueueDeletionIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("deletion");

	static final TestQueues.Topology topology = queues.topology();

	static final String WORK = queues.name("work");

	static final String DOOMED = queues.name("doomed");

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add("test.work", () -> WORK);
		registry.add("test.doomed", () -> DOOMED);
		registry.add("retry.parking-lot", topology::parkingLot);
		registry.add("retry.tiers", topology::tiers);
		registry.add("retry.defaults.max-retries", () -> 2);
		registry.add("retry.defaults.delays", () -> topology.shortTier().toMillis() + "ms");
		registry.add("retry.policies.slow.delays", () -> topology.longTier().toMillis() + "ms");
		registry.add("retry.publish.failure-initial-pause", () -> "200ms");
		registry.add("retry.publish.failure-max-pause", () -> "1s");
	}

	@Autowired
	InvocationRecorder deliveries;

	@Autowired
	RetryEvents events;

	@Autowired
	RabbitListenerEndpointRegistry endpoints;

	BrokerClient broker;

	ParkingLot parked;

	@BeforeEach
	void openClient() {
		this.broker = new BrokerClient();
		this.parked = new ParkingLot(this.broker, topology.parkingLot());
	}

	@AfterEach
	void closeClient() {
		this.broker.close();
	}

	@Test
	void deletedTierQueueIsDeclaredAgainByTheNextForward() {
		this.broker.deleteQueue(topology.shortTierQueue());

		String id = publish(WORK, "fail-until-retry:1");

		await().atMost(Duration.ofSeconds(10)).until(() -> this.deliveries.successes(id) == 1);
		assertThat(this.deliveries.of(id)).extracting(InvocationRecorder.Invocation::retryCount)
			.containsExactly(0L, 1L);
		assertThat(this.broker.queueExists(topology.shortTierQueue())).isTrue();
		assertThat(this.parked.copies(id)).isEmpty();
	}

	@Test
	void deletedParkingLotIsDeclaredAgainBeforeTheNextMessageIsParked() {
		this.broker.deleteQueue(topology.parkingLot());

		String id = publish(WORK, "reject");

		await().atMost(Duration.ofSeconds(10)).until(() -> this.parked.contains(id));
		assertThat(this.parked.single(id).header(RetryHeaders.PARKED_REASON)).isEqualTo("not-retryable");
		assertThat(this.deliveries.count(id)).isOne();
	}

	@Test
	void retryWaitingInATierWhenItsWorkQueueIsDeletedEndsInTheParkingLotAsUnroutable() {
		String id = publish(DOOMED, "always");
		await().atMost(Duration.ofSeconds(10))
			.until(() -> this.deliveries.count(id) == 1
					&& this.events.scheduled.stream().anyMatch((event) -> id.equals(event.messageId())));

		// The application stops consuming the queue and an operator deletes it, retries
		// still waiting.
		this.endpoints.getListenerContainer("doomed").stop();
		this.broker.deleteQueue(DOOMED);

		await().atMost(topology.longTier().plusSeconds(10)).until(() -> this.parked.contains(id));
		BrokerClient.Received parkedMessage = this.parked.single(id);
		// The broker parked it (alternate exchange), so no reason header: readers infer
		// 'unroutable'.
		assertThat(parkedMessage.headers()).doesNotContainKey(RetryHeaders.PARKED_REASON);
		assertThat(HeaderChanges.parkedReasonOf(parkedMessage.headers())).isEqualTo(ParkedReason.UNROUTABLE);
		assertThat(parkedMessage.header(RetryHeaders.QUEUE)).isEqualTo(DOOMED);
		assertThat(parkedMessage.header(RetryHeaders.COUNT)).isEqualTo("1");
		assertThat(parkedMessage.headers()).containsKey("x-death");
		assertThat(parkedMessage.bodyText()).isEqualTo("payload");
		assertThat(this.deliveries.count(id)).isOne();
	}

	@Test
	void tierQueueReplacedWithOtherArgumentsMakesForwardsFailWithoutLossAndWithoutAHotLoop() {
		// Somebody deletes the tier and declares it again as another queue type (and
		// without its binding).
		this.broker.deleteQueue(topology.shortTierQueue());
		this.broker.declareQueue(topology.shortTierQueue(),
				Map.of("x-queue-type", "quorum", "x-message-ttl", (int) topology.shortTier().toMillis()));
		try {
			String id = publish(WORK, "fail-until-retry:1");
			await().atMost(Duration.ofSeconds(10)).until(() -> this.deliveries.count(id) >= 1);

			// The forward can neither route nor heal the topology: the message must stay
			// in its queue, reported as a failed forward, and the consumer must pause
			// between attempts.
			await().during(Duration.ofSeconds(3))
				.atMost(Duration.ofSeconds(4))
				.until(() -> this.deliveries.successes(id) == 0);
			assertThat(this.deliveries.count(id)).as("listener invocations in 3 s of failing forwards")
				.isLessThanOrEqualTo(10);
			assertThat(this.events.forwardFailuresOf(id)).isPositive();

			this.broker.deleteQueue(topology.shortTierQueue());
			await().atMost(Duration.ofSeconds(15)).until(() -> this.deliveries.successes(id) == 1);
			assertThat(this.parked.copies(id)).isEmpty();
		}
		finally {
			this.broker.deleteQueue(topology.shortTierQueue());
		}
	}

	private String publish(String queue, String script) {
		String id = UUID.randomUUID().toString();
		AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().messageId(id)
			.deliveryMode(2)
			.contentType("text/plain")
			.headers(Map.of(Script.HEADER, script))
			.build();
		this.broker.publish("", queue, properties, "payload".getBytes(StandardCharsets.UTF_8));
		return id;
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@Bean
		InvocationRecorder deliveries() {
			return new InvocationRecorder();
		}

		@Bean
		RetryEvents retryEvents() {
			return new RetryEvents();
		}

		@Bean
		Queue workQueue() {
			return new Queue(WORK);
		}

		@Bean
		Queue doomedQueue() {
			return new Queue(DOOMED);
		}

		@Bean
		Listeners listeners(InvocationRecorder deliveries) {
			return new Listeners(deliveries);
		}

	}

	static class Listeners extends ScriptedListener {

		Listeners(InvocationRecorder deliveries) {
			super(deliveries);
		}

		@RabbitListener(queues = "${test.work}")
		@RetryableListener(noRetryOn = IllegalArgumentException.class)
		void onWork(Message message) {
			run(message);
		}

		@RabbitListener(id = "doomed", queues = "${test.doomed}")
		@RetryableListener(policy = "slow")
		void onDoomed(Message message) {
			run(message);
		}

	}

}
