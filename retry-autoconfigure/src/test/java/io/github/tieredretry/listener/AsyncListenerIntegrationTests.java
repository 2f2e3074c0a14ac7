package io.github.tieredretry.listener;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.install.RetryBackends;
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
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Asynchronous listeners on the real broker: a {@code CompletableFuture} or a
 * {@code Mono} that completes exceptionally is a failed attempt, retried or parked like a
 * synchronous one, and so are a result that is cancelled and one that does not complete
 * within the attempt timeout; on the broker backend where the broker has it.
 */
@SpringBootTest(classes = { RecordingApplication.class, AsyncListenerIntegrationTests.Wiring.class,
		AsyncListenerIntegrationTests.AsyncListeners.class })
@RabbitIntegrationTest
class AsyncListenerIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("async");

	static final TestQueues.Topology topology = queues.topology();

	static final String FUTURE_QUEUE = queues.name("future");

	static final String MONO_QUEUE = queues.name("mono");

	static final String BROKER_QUEUE = queues.name("broker");

	static {
		queues.settings((settings) -> settings.topology(topology)
			.retries(2, topology.shortTier())
			.set("retry.async.attempt-timeout", "700ms")
			.brokerPolicy("linear", 2, "300ms"));
	}

	@Autowired
	InvocationRecorder recorder;

	@Autowired
	AsyncListeners listeners;

	@Autowired
	RetryBackends backends;

	@Test
	void futureThatFailsTwiceThenSucceedsIsRetriedTwiceAndProcessed() {
		String id = Messages.publish(queues.broker(), "", FUTURE_QUEUE, "fail:2");

		await().atMost(Duration.ofSeconds(15)).until(() -> this.recorder.succeeded(id));
		assertThat(this.recorder.retryCounts(id)).containsExactly(0L, 1L, 2L);
		assertThat(this.recorder.of(id).get(1).header(RetryHeaders.EXCEPTION))
			.isEqualTo(IllegalStateException.class.getName());
		assertThat(this.recorder.gaps(id))
			.allSatisfy((gap) -> assertThat(gap).isGreaterThanOrEqualTo(topology.shortTier()));
		// Processed, so acked: a further retry of it would have been forwarded before
		// that
		// of a marker that fails once now, and come back before the marker's retry.
		String marker = Messages.publish(queues.broker(), "", FUTURE_QUEUE, "fail:1");
		await().atMost(Duration.ofSeconds(15)).until(() -> this.recorder.succeeded(marker));
		assertThat(this.recorder.count(id)).isEqualTo(3);
		assertThat(queues.broker().count(FUTURE_QUEUE)).isZero();
		assertThat(queues.parkingLot(topology.parkingLot()).find(id)).isNull();
	}

	@Test
	void futureThatNeverSucceedsIsParkedWithItsLastFailure() {
		String id = Messages.publish(queues.broker(), "", FUTURE_QUEUE, "always");

		BrokerClient.Received parked = queues.parkingLot(topology.parkingLot()).awaitSingle(id, Duration.ofSeconds(15));
		assertThat(parked.header(RetryHeaders.PARKED_REASON)).isEqualTo("exhausted");
		assertThat(parked.header(RetryHeaders.ERROR)).isEqualTo("scripted failure 3");
		assertThat(this.recorder.count(id)).isEqualTo(3);
	}

	@Test
	void cancelledFutureIsAFailedAttemptThatSaysItWasCancelled() {
		String id = Messages.publish(queues.broker(), "", FUTURE_QUEUE, "cancel-once");

		await().atMost(Duration.ofSeconds(15)).until(() -> this.recorder.succeeded(id));
		InvocationRecorder.Invocation retry = this.recorder.of(id).get(1);
		assertThat(retry.retryCount()).isOne();
		assertThat(retry.header(RetryHeaders.EXCEPTION)).isEqualTo("java.util.concurrent.CancellationException");
		assertThat(String.valueOf(retry.header(RetryHeaders.ERROR)))
			.startsWith("The listener's CompletableFuture was cancelled");
	}

	@Test
	void futureThatDoesNotCompleteWithinTheAttemptTimeoutIsCancelledAndRetried() {
		String id = Messages.publish(queues.broker(), "", FUTURE_QUEUE, "hang-once");

		await().atMost(Duration.ofSeconds(15)).until(() -> this.recorder.succeeded(id));
		InvocationRecorder.Invocation retry = this.recorder.of(id).get(1);
		assertThat(retry.header(RetryHeaders.EXCEPTION)).isEqualTo(AsyncAttemptTimeoutException.class.getName());
		assertThat(String.valueOf(retry.header(RetryHeaders.ERROR))).contains("did not complete within 700 ms");
		assertThat(this.listeners.hung).singleElement()
			.satisfies((future) -> assertThat(future.isCancelled()).isTrue());
		// No sooner than the timeout plus the retry's delay.
		assertThat(this.recorder.gaps(id)).singleElement()
			.satisfies((gap) -> assertThat(gap).isGreaterThanOrEqualTo(Duration.ofMillis(700)));
	}

	@Test
	void monoThatFailsIsRetriedAndOneThatNeverSucceedsIsParked() {
		String recovering = Messages.publish(queues.broker(), "", MONO_QUEUE, "fail:1");
		String failing = Messages.publish(queues.broker(), "", MONO_QUEUE, "always");

		await().atMost(Duration.ofSeconds(15))
			.until(() -> this.recorder.succeeded(recovering)
					&& queues.parkingLot(topology.parkingLot()).find(failing) != null);
		assertThat(this.recorder.retryCounts(recovering)).containsExactly(0L, 1L);
		assertThat(queues.parkingLot(topology.parkingLot()).single(failing).header(RetryHeaders.PARKED_REASON))
			.isEqualTo("exhausted");
	}

	@Test
	void onTheBrokerBackendAFailedFutureWaitsInItsQueue() {
		BrokerBackendAssertions.runsOnTheBrokerWhereItCan(this.backends, "onBroker");
		String id = Messages.publish(queues.broker(), "", BROKER_QUEUE, "fail:2");

		await().atMost(Duration.ofSeconds(15)).until(() -> this.recorder.succeeded(id));
		assertThat(this.recorder.retryCounts(id)).containsExactly(0L, 1L, 2L);
		assertThat(this.recorder.gaps(id))
			.allSatisfy((gap) -> assertThat(gap).isGreaterThanOrEqualTo(Duration.ofMillis(250)));
	}

	/** The downstream's threads, and the quorum queue of the broker backend. */
	@Configuration(proxyBeanMethods = false)
	static class Wiring {

		@Bean
		org.springframework.amqp.core.Queue brokerQueue() {
			return QueueBuilder.durable(BROKER_QUEUE).quorum().build();
		}

		@Bean(destroyMethod = "shutdownNow")
		ExecutorService downstream() {
			return Executors.newFixedThreadPool(2);
		}

	}

	/**
	 * Listeners whose work runs on another thread, as a call to a non-blocking client
	 * would: {@code cancel-once} and {@code hang-once} cancel their first future or never
	 * complete it; other scripts as {@link Script} says.
	 */
	static class AsyncListeners extends ScriptedListener {

		final List<CompletableFuture<Void>> hung = new CopyOnWriteArrayList<>();

		private final ExecutorService downstream;

		AsyncListeners(InvocationRecorder recorder, ExecutorService downstream) {
			super(recorder);
			this.downstream = downstream;
		}

		@RabbitListener(queuesToDeclare = @Queue("${test.queues.future}"))
		@RetryableListener
		CompletableFuture<Void> onFuture(Message message) {
			String script = new String(message.getBody());
			boolean first = this.recorder.count(message.getMessageProperties().getMessageId()) == 0;
			if (script.equals("cancel-once") || script.equals("hang-once")) {
				this.recorder.record(message, !first);
				CompletableFuture<Void> future = new CompletableFuture<>();
				if (!first) {
					future.complete(null);
				}
				else if (script.equals("cancel-once")) {
					future.cancel(false);
				}
				else {
					this.hung.add(future);
				}
				return future;
			}
			return CompletableFuture.runAsync(() -> run(message), this.downstream);
		}

		@RabbitListener(queuesToDeclare = @Queue("${test.queues.mono}"))
		@RetryableListener
		Mono<Void> onMono(Message message) {
			return Mono.<Void>fromRunnable(() -> run(message)).subscribeOn(Schedulers.boundedElastic());
		}

		@RabbitListener(queues = "${test.queues.broker}")
		@RetryableListener(policy = "linear")
		CompletableFuture<Void> onBroker(Message message) {
			return CompletableFuture.runAsync(() -> run(message), this.downstream);
		}

	}

}
