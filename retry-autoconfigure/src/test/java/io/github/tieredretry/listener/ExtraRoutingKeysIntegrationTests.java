package io.github.tieredretry.listener;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.event.MessageParkedEvent;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.MessageEvents;
import io.github.tieredretry.testsupport.Messages;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.RecordingApplication;
import io.github.tieredretry.testsupport.ScriptedListener;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Messages published with RabbitMQ's {@code CC} header (extra routing keys): a forward
 * must reach only its tier, the parking lot or its origin queue, never the queues the
 * {@code CC} names again.
 */
@SpringBootTest(classes = { RecordingApplication.class, ExtraRoutingKeysIntegrationTests.Listeners.class })
@RabbitIntegrationTest
class ExtraRoutingKeysIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("cc")
		.settings((settings) -> settings.quorumTiers("190ms").retries(1, "190ms"));

	static final String FAILING = queues.name("failing");

	static final String OTHER_RETRYABLE = queues.name("other-retryable");

	static final String AUDIT = queues.name("audit");

	@Autowired
	InvocationRecorder recorder;

	@Autowired
	MessageEvents<MessageParkedEvent> parked;

	@Test
	void retryReturnsOnlyToTheQueueThatFailedNotToAnotherRetryableQueueNamedInItsCc() {
		String id = publishWithCc(FAILING, "fail:1", OTHER_RETRYABLE);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded("failing:" + id));
		// The publish itself reached both queues (that is what CC is for); the retry must
		// come back to one.
		await().atMost(Duration.ofSeconds(5)).until(() -> this.recorder.succeeded("other:" + id));
		// A retry routed to the other queue too would have been put there as it came back
		// to the failing one: before a marker published now, which its one consumer gets
		// in order.
		String marker = Messages.publish(queues.broker(), "", OTHER_RETRYABLE, "ok");
		await().atMost(Duration.ofSeconds(5)).until(() -> this.recorder.succeeded("other:" + marker));
		assertThat(this.recorder.count("other:" + id)).isEqualTo(1);
		assertThat(this.recorder.of("failing:" + id)).extracting(InvocationRecorder.Invocation::retryCount)
			.containsExactly(0L, 1L);
	}

	@Test
	void parkedCopyGoesToTheParkingLotOnlyAndKeepsItsCcInAHeader() {
		queues.broker().declareQueue(AUDIT);
		String id = publishWithCc(FAILING, "reject", AUDIT);
		BrokerClient.Received parked = queues.parkingLot().awaitSingle(id, Duration.ofSeconds(10));
		assertThat(parked.headers()).doesNotContainKeys("CC", "BCC");
		assertThat(String.valueOf(parked.headers().get(RetryHeaders.ORIGINAL_CC))).contains(AUDIT);
		// The original publish put one copy in the audit queue; parking must not add a
		// second one, which would be there once the broker had confirmed the parked copy
		// (the event says so).
		await().atMost(Duration.ofSeconds(5)).until(() -> !this.parked.of(id).isEmpty());
		assertThat(queues.broker().count(AUDIT)).isEqualTo(1);
	}

	private static String publishWithCc(String queue, String script, String cc) {
		String id = UUID.randomUUID().toString();
		AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().messageId(id)
			.deliveryMode(2)
			.headers(Map.of("CC", List.of(cc)))
			.build();
		queues.broker().publish("", queue, properties, script.getBytes(StandardCharsets.UTF_8));
		return id;
	}

	static class Listeners extends ScriptedListener {

		Listeners(InvocationRecorder recorder) {
			super(recorder);
		}

		@RabbitListener(queuesToDeclare = @Queue("${test.queues.failing}"))
		@RetryableListener(noRetryOn = IllegalArgumentException.class)
		void onFailing(Message message) {
			tagged("failing:", message);
		}

		@RabbitListener(queuesToDeclare = @Queue("${test.queues.other-retryable}"))
		@RetryableListener
		void onOther(Message message) {
			this.recorder.record("other:" + message.getMessageProperties().getMessageId(),
					message.getMessageProperties().getRetryCount(), true);
		}

		private void tagged(String prefix, Message message) {
			String id = message.getMessageProperties().getMessageId();
			message.getMessageProperties().setMessageId(prefix + id);
			try {
				run(message);
			}
			finally {
				message.getMessageProperties().setMessageId(id);
			}
		}

	}

}
