package io.github.tieredretry.listener;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.event.RetryScheduledEvent;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.Messages;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.RecordingApplication;
import io.github.tieredretry.testsupport.Script;
import io.github.tieredretry.testsupport.ScriptedListener;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.event.EventListener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A listener with bugs, and an application event listener that is slow: neither may stop
 * a queue's consumer, loop a message for ever, or hold up acknowledgements.
 */
@SpringBootTest(classes = { RecordingApplication.class, ListenerMisbehaviourIntegrationTests.Listeners.class,
		ListenerMisbehaviourIntegrationTests.SlowEventListener.class })
@RabbitIntegrationTest
class ListenerMisbehaviourIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("misbehaviour")
		.settings((settings) -> settings.quorumTiers("170ms")
			.retries(2, "170ms")
			.set("spring.rabbitmq.listener.simple.prefetch", 1));

	static final String BUGGY = queues.name("buggy");

	static final String ONE_AT_A_TIME = queues.name("one-at-a-time");

	@Autowired
	InvocationRecorder recorder;

	@Autowired
	SlowEventListener slowEvents;

	@Test
	void stackOverflowErrorIsRetriedAndParkedAndTheConsumerKeepsConsuming() {
		String overflowing = Messages.publish(queues.broker(), "", BUGGY, "stack-overflow");
		BrokerClient.Received parked = queues.parkingLot().awaitSingle(overflowing, Duration.ofSeconds(15));
		parked.assertParked("exhausted", StackOverflowError.class);
		assertThat(this.recorder.count(overflowing)).isEqualTo(3);

		String next = Messages.publish(queues.broker(), "", BUGGY, "ok");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(next));
	}

	@Test
	void exceptionThatCannotDescribeItselfIsRetriedAndParkedWithAPlaceholderError() {
		String id = Messages.publish(queues.broker(), "", BUGGY, "broken-exception");
		BrokerClient.Received parked = queues.parkingLot().awaitSingle(id, Duration.ofSeconds(15));
		parked.assertParked("exhausted", Script.BrokenException.class);
		assertThat(parked.header(RetryHeaders.ERROR))
			.isEqualTo("<getMessage() threw java.lang.UnsupportedOperationException>");
		assertThat(this.recorder.count(id)).isEqualTo(3);
	}

	@Test
	void slowEventListenerHoldsUpNoAcknowledgement() {
		// Prefetch 1: until a failed message is acked, its consumer gets nothing else.
		String first = Messages.publish(queues.broker(), "", ONE_AT_A_TIME, "fail:1");
		String second = Messages.publish(queues.broker(), "", ONE_AT_A_TIME, "fail:1");
		String healthy = Messages.publish(queues.broker(), "", ONE_AT_A_TIME, "ok");
		try {
			// The first failed message's RetryScheduledEvent reached the event listener,
			// which blocks from then on, until the test ends.
			await().atMost(Duration.ofSeconds(10)).until(() -> this.slowEvents.entered.contains(first));
			// Yet the second failed message was forwarded and acked after it (the
			// consumer got the healthy one), and both retries came back: no ack waited
			// for the event listener, not even the acks that follow the blocked event.
			await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(healthy));
			await().atMost(Duration.ofSeconds(10))
				.until(() -> this.recorder.succeeded(first) && this.recorder.succeeded(second));
			assertThat(this.slowEvents.entered).as("events the blocked event listener was given")
				.containsExactly(first);
			assertThat(this.slowEvents.blocked.getCount()).as("the event listener is still blocked").isOne();
		}
		finally {
			this.slowEvents.blocked.countDown();
		}
	}

	static class Listeners extends ScriptedListener {

		Listeners(InvocationRecorder recorder) {
			super(recorder);
		}

		@RabbitListener(queuesToDeclare = @Queue("${test.queues.buggy}"))
		@RetryableListener
		void onBuggy(Message message) {
			run(message);
		}

		@RabbitListener(queuesToDeclare = @Queue("${test.queues.one-at-a-time}"), concurrency = "1")
		@RetryableListener
		void onOneAtATime(Message message) {
			run(message);
		}

	}

	/** Like an event listener that calls a pager: blocks until the test lets it go. */
	static class SlowEventListener {

		final CountDownLatch blocked = new CountDownLatch(1);

		/** The ids of the messages whose event it was given. */
		final List<String> entered = new CopyOnWriteArrayList<>();

		@EventListener
		void onRetryScheduled(RetryScheduledEvent event) throws InterruptedException {
			if (ONE_AT_A_TIME.equals(event.queue())) {
				this.entered.add(String.valueOf(event.messageId()));
				this.blocked.await();
			}
		}

	}

}
