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
import io.github.tieredretry.testsupport.RecordingApplication;
import io.github.tieredretry.testsupport.ScriptedListener;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.ExchangeTypes;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.Exchange;
import org.springframework.amqp.rabbit.annotation.Queue;
import org.springframework.amqp.rabbit.annotation.QueueBinding;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Where a retry goes and when: per-message TTLs, delays beyond the largest tier, queues
 * sharing an exchange, and a work queue that disappears while its retry waits.
 */
@SpringBootTest(classes = { RecordingApplication.class, TierRoutingIntegrationTests.Listeners.class })
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

	static {
		queues.settings((settings) -> settings.classicTiers("200ms, 400ms, 1013ms")
			.retries(3, "1013ms")
			.set("test.fanout", FANOUT)
			.retries("long", 1, "2500ms"));
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
		assertThat(queues.parkingLot().from(TTL_QUEUE)).isEmpty();
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
		// A retry routed to both queues would have been put in the healthy queue as it
		// came back to the failing one: before a marker published now, which its one
		// consumer gets in order.
		String marker = Messages.publish(queues.broker(), "", FANOUT_HEALTHY, "ok");
		await().atMost(Duration.ofSeconds(5)).until(() -> this.recorder.succeeded("healthy:" + marker));
		assertThat(this.recorder.count("healthy:" + id)).isEqualTo(1);
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

		await().atMost(Duration.ofSeconds(10)).until(() -> queues.parkingLot().find(id) != null);
		BrokerClient.Received parked = queues.parkingLot().find(id);
		assertThat(parked.bodyText()).isEqualTo("always");
		assertThat(parked.header(RetryHeaders.QUEUE)).isEqualTo(VANISHING_QUEUE);
		assertThat(parked.header(RetryHeaders.COUNT)).isEqualTo("1");
		assertThat(HeaderChanges.parkedReasonOf(parked.headers())).isEqualTo(ParkedReason.UNROUTABLE);
		assertThat(this.recorder.count(id)).isEqualTo(1);
	}

	static class Listeners extends ScriptedListener {

		Listeners(InvocationRecorder recorder) {
			super(recorder);
		}

		@RabbitListener(queuesToDeclare = @Queue("${test.queues.ttl}"))
		@RetryableListener
		void onTtl(Message message) {
			run(message);
		}

		@RabbitListener(queuesToDeclare = @Queue("${test.queues.hop}"))
		@RetryableListener(policy = "long")
		void onHop(Message message) {
			run(message);
		}

		@RabbitListener(bindings = @QueueBinding(value = @Queue("${test.queues.fanout-failing}"),
				exchange = @Exchange(name = "${test.fanout}", type = ExchangeTypes.FANOUT)))
		@RetryableListener(delays = "200ms")
		void onFanoutFailing(Message message) {
			tagged("failing:", message);
		}

		@RabbitListener(bindings = @QueueBinding(value = @Queue("${test.queues.fanout-healthy}"),
				exchange = @Exchange(name = "${test.fanout}", type = ExchangeTypes.FANOUT)))
		@RetryableListener(delays = "200ms")
		void onFanoutHealthy(Message message) {
			this.recorder.record("healthy:" + message.getMessageProperties().getMessageId(),
					message.getMessageProperties().getRetryCount(), true);
		}

		@RabbitListener(id = "vanishing-${test.id}", queues = "${test.queues.vanishing}")
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
