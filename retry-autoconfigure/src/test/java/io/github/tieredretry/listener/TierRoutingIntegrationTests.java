package io.github.tieredretry.listener;

import java.time.Duration;
import java.util.List;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.headers.HeaderChanges;
import io.github.tieredretry.policy.ParkedReason;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.Messages;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.ScriptedListener;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.Binding;
import org.springframework.amqp.core.BindingBuilder;
import org.springframework.amqp.core.FanoutExchange;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
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
 * Where a retry goes and when: per-message TTLs, delays beyond the largest tier, queues
 * sharing an exchange, and a work queue that disappears while its retry waits.
 */
@SpringBootTest
@RabbitIntegrationTest
class TierRoutingIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("routing");

	static final String ID = queues.id();

	static final String TTL_QUEUE = queues.name("ttl");

	static final String HOP_QUEUE = queues.name("hop");

	static final String FANOUT = "routing-fanout-" + ID;

	static final String FANOUT_FAILING = queues.name("fanout-failing");

	static final String FANOUT_HEALTHY = queues.name("fanout-healthy");

	static final String VANISHING_QUEUE = queues.name("vanishing");

	static final String PARKING_LOT = queues.name("parking");

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add("test.id", () -> ID);
		registry.add("test.ttl-queue", () -> TTL_QUEUE);
		registry.add("test.hop-queue", () -> HOP_QUEUE);
		registry.add("test.fanout-failing", () -> FANOUT_FAILING);
		registry.add("test.fanout-healthy", () -> FANOUT_HEALTHY);
		registry.add("test.vanishing-queue", () -> VANISHING_QUEUE);
		registry.add("retry.parking-lot", () -> PARKING_LOT);
		registry.add("retry.tiers", () -> "200ms, 400ms, 1013ms");
		// Tier names that other suites share on the test broker, where they are classic
		// queues.
		registry.add("retry.queue-type", () -> "classic");
		registry.add("retry.defaults.max-retries", () -> "3");
		registry.add("retry.defaults.delays", () -> "1013ms");
		registry.add("retry.policies.long.delays", () -> "2500ms");
		registry.add("retry.policies.long.max-retries", () -> "1");
	}

	@Autowired
	InvocationRecorder recorder;

	@Autowired
	RabbitListenerEndpointRegistry endpoints;

	@AfterAll
	static void deleteExchange() {
		try (BrokerClient client = new BrokerClient()) {
			client.deleteExchange(FANOUT);
		}
	}

	@BeforeAll
	static void declareVanishingQueue() {
		// Not a Queue bean: nothing must re-create it once the test deletes it.
		try (BrokerClient client = new BrokerClient()) {
			client.declareQueue(VANISHING_QUEUE);
		}
	}

	@Test
	void messageWithPerMessageTtlShorterThanItsTierStillWaitsTheWholeDelay() {
		// With its own 300 ms expiration kept, the message would leave the 1 s tier after
		// 300 ms.
		String id = Messages.publish(queues.broker(), "", TTL_QUEUE, "fail:1", "300");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(id));
		assertThat(this.recorder.count(id)).isEqualTo(2);
		assertThat(this.recorder.gaps(id).get(0)).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
		assertThat(queues.parkingLot(PARKING_LOT).from(TTL_QUEUE)).isEmpty();
	}

	@Test
	void delayLongerThanTheLargestTierHopsThroughItAndNeverArrivesEarly() {
		String id = Messages.publish(queues.broker(), "", HOP_QUEUE, "fail:1");
		await().atMost(Duration.ofSeconds(15)).until(() -> this.recorder.succeeded(id));
		List<InvocationRecorder.Invocation> invocations = this.recorder.of(id);
		assertThat(invocations).hasSize(2);
		assertThat(invocations.get(1).retryCount()).isEqualTo(1);
		assertThat(this.recorder.gaps(id).get(0)).isGreaterThanOrEqualTo(Duration.ofMillis(2500));
	}

	@Test
	void retryReturnsOnlyToTheQueueThatFailedNotToOtherQueuesBoundToTheSameExchange() {
		String id = Messages.publish(queues.broker(), FANOUT, "", "fail:1");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded("failing:" + id));
		await().during(Duration.ofMillis(1500))
			.atMost(Duration.ofSeconds(5))
			.until(() -> this.recorder.count("healthy:" + id) == 1);
		assertThat(this.recorder.count("failing:" + id)).isEqualTo(2);
	}

	@Test
	void retryWhoseWorkQueueWasDeletedEndsInTheParkingLotAsUnroutable() {
		String id = Messages.publish(queues.broker(), "", VANISHING_QUEUE, "always");
		await().atMost(Duration.ofSeconds(5)).until(() -> this.recorder.count(id) == 1);
		// The retry is being forwarded to wait 1 s in a tier; its queue goes away
		// meanwhile. (A synchronous stop waits for the consumer's receive timeout, long
		// enough for the retry to come back into the queue before it is deleted.)
		this.endpoints.getListenerContainer("vanishing-" + ID).stop(() -> {
		});
		queues.broker().deleteQueue(VANISHING_QUEUE);

		await().atMost(Duration.ofSeconds(10)).until(() -> queues.parkingLot(PARKING_LOT).find(id) != null);
		BrokerClient.Received parked = queues.parkingLot(PARKING_LOT).find(id);
		assertThat(parked.bodyText()).isEqualTo("always");
		assertThat(parked.header(RetryHeaders.QUEUE)).isEqualTo(VANISHING_QUEUE);
		assertThat(parked.header(RetryHeaders.COUNT)).isEqualTo("1");
		assertThat(HeaderChanges.parkedReasonOf(parked.headers())).isEqualTo(ParkedReason.UNROUTABLE);
		assertThat(this.recorder.count(id)).isEqualTo(1);
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@Bean
		InvocationRecorder invocationRecorder() {
			return new InvocationRecorder();
		}

		@Bean
		Queue ttlQueue() {
			return new Queue(TTL_QUEUE);
		}

		@Bean
		Queue hopQueue() {
			return new Queue(HOP_QUEUE);
		}

		@Bean
		FanoutExchange fanout() {
			return new FanoutExchange(FANOUT);
		}

		@Bean
		Queue fanoutFailing() {
			return new Queue(FANOUT_FAILING);
		}

		@Bean
		Queue fanoutHealthy() {
			return new Queue(FANOUT_HEALTHY);
		}

		@Bean
		Binding failingBinding() {
			return BindingBuilder.bind(fanoutFailing()).to(fanout());
		}

		@Bean
		Binding healthyBinding() {
			return BindingBuilder.bind(fanoutHealthy()).to(fanout());
		}

		@Bean
		Listeners listeners(InvocationRecorder recorder) {
			return new Listeners(recorder);
		}

	}

	static class Listeners extends ScriptedListener {

		Listeners(InvocationRecorder recorder) {
			super(recorder);
		}

		@RabbitListener(queues = "${test.ttl-queue}")
		@RetryableListener
		void onTtl(Message message) {
			run(message);
		}

		@RabbitListener(queues = "${test.hop-queue}")
		@RetryableListener(policy = "long")
		void onHop(Message message) {
			run(message);
		}

		@RabbitListener(queues = "${test.fanout-failing}")
		@RetryableListener(delays = "200ms")
		void onFanoutFailing(Message message) {
			tagged("failing:", message);
		}

		@RabbitListener(queues = "${test.fanout-healthy}")
		@RetryableListener(delays = "200ms")
		void onFanoutHealthy(Message message) {
			this.recorder.record("healthy:" + message.getMessageProperties().getMessageId(),
					message.getMessageProperties().getRetryCount(), true);
		}

		@RabbitListener(id = "vanishing-${test.id}", queues = "${test.vanishing-queue}")
		@RetryableListener
		void onVanishing(Message message) {
			run(message);
		}

		private void tagged(String prefix, Message message) {
			message.getMessageProperties().setMessageId(prefix + message.getMessageProperties().getMessageId());
			run(message);
		}

	}

}
