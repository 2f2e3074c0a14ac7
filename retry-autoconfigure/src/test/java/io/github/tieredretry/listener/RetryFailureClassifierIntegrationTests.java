package io.github.tieredretry.listener;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.Messages;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.RecordingApplication;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link RetryFailureClassifier} beans decide, in order, before the policy's exception
 * types: an HTTP-like status says whether a retry can help where the exception type
 * cannot.
 */
@SpringBootTest(classes = { RecordingApplication.class, RetryFailureClassifierIntegrationTests.Listeners.class,
		RetryFailureClassifierIntegrationTests.Classifiers.class })
@RabbitIntegrationTest
class RetryFailureClassifierIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("classifier")
		.settings((settings) -> settings.quorumTiers("190ms")
			.retries(2, "190ms")
			// By type, a status failure is never retried: the classifier knows better for
			// a 503.
			.set("retry.defaults.no-retry-on", StatusException.class.getName()));

	static final String CALLS = queues.name("calls");

	@Autowired
	InvocationRecorder recorder;

	@Autowired
	StatusClassifier statusClassifier;

	@Test
	void clientErrorIsParkedAtOnceAndTheClassifierSeesTheListener() {
		String id = Messages.publish(queues.broker(), "", CALLS, "status:400");
		BrokerClient.Received parked = queues.parkingLot().awaitSingle(id, Duration.ofSeconds(15));
		parked.assertParked("not-retryable", StatusException.class);
		assertThat(this.recorder.count(id)).isOne();
		assertThat(this.statusClassifier.listeners).isNotEmpty()
			.allSatisfy((listener) -> assertThat(listener.listener())
				.isEqualTo("RetryFailureClassifierIntegrationTests.Listeners#onCall"))
			.allSatisfy((listener) -> assertThat(listener.queues()).containsExactly(CALLS));
	}

	@Test
	void unavailableIsRetriedAlthoughItsTypeIsNoRetryOn() {
		String id = Messages.publish(queues.broker(), "", CALLS, "status:503");
		await().atMost(Duration.ofSeconds(15)).until(() -> this.recorder.succeeded(id));
		assertThat(this.recorder.retryCounts(id)).containsExactly(0L, 1L);
		assertThat(queues.parkingLot().find(id)).isNull();
	}

	@Test
	void classifierThatThrowsLeavesTheDecisionToThePolicy() {
		// The first classifier has no opinion, the second throws: the policy retries it
		// (its type is retryable) and parks it when its retries are spent.
		String id = Messages.publish(queues.broker(), "", CALLS, "classifier-bug");
		BrokerClient.Received parked = queues.parkingLot().awaitSingle(id, Duration.ofSeconds(15));
		parked.assertParked("exhausted", IllegalStateException.class);
		assertThat(this.recorder.count(id)).isEqualTo(3);
	}

	/** Two classifiers in order: the status classifier, then one with a bug. */
	@Configuration(proxyBeanMethods = false)
	static class Classifiers {

		@Bean
		@Order(1)
		StatusClassifier statusClassifier() {
			return new StatusClassifier();
		}

		@Bean
		@Order(2)
		RetryFailureClassifier buggyClassifier() {
			return (listener, failure) -> {
				throw new UnsupportedOperationException("a classifier's bug");
			};
		}

	}

	/** Like a REST client's error: 4xx will not change on a retry, 5xx may. */
	static class StatusException extends RuntimeException {

		final int status;

		StatusException(int status) {
			super("HTTP " + status);
			this.status = status;
		}

	}

	static class StatusClassifier implements RetryFailureClassifier {

		final List<RetryableListenerInfo> listeners = new CopyOnWriteArrayList<>();

		@Override
		public Classification classify(RetryableListenerInfo listener, Throwable failure) {
			this.listeners.add(listener);
			if (failure instanceof StatusException status) {
				return (status.status < 500) ? Classification.NOT_RETRYABLE : Classification.RETRYABLE;
			}
			return Classification.UNDECIDED;
		}

	}

	static class Listeners {

		private final InvocationRecorder recorder;

		Listeners(InvocationRecorder recorder) {
			this.recorder = recorder;
		}

		@RabbitListener(queuesToDeclare = @Queue("${test.queues.calls}"))
		@RetryableListener
		void onCall(Message message) {
			String body = new String(message.getBody());
			boolean firstDelivery = message.getMessageProperties().getRetryCount() == 0;
			boolean fails = body.startsWith("status:4") || body.equals("classifier-bug")
					|| (body.startsWith("status:5") && firstDelivery);
			this.recorder.record(message, !fails);
			if (!fails) {
				return;
			}
			if (body.startsWith("status:")) {
				throw new StatusException(Integer.parseInt(body.substring("status:".length())));
			}
			throw new IllegalStateException("no classifier knows this one");
		}

	}

}
