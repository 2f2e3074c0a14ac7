package io.github.tieredretry.listener;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.install.RetryBackends;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.Messages;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.RecordingApplication;
import io.github.tieredretry.testsupport.ScriptedListener;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.annotation.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.config.DirectRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.amqp.support.AmqpHeaders;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Batch listeners on the real broker: each failed message of a batch is retried or parked
 * on its own, the others are acked once; with consumer-side batching, with the listener
 * stopping at a failure, with a failure of the whole batch, on a container without
 * consumer-side batching, and on the broker backend where the broker has it (RabbitMQ
 * 4.3; the tiers elsewhere).
 */
@SpringBootTest(classes = { RecordingApplication.class, BatchListenerIntegrationTests.Factories.class,
		BatchListenerIntegrationTests.Batches.class, BatchListenerIntegrationTests.BatchListeners.class })
@RabbitIntegrationTest
class BatchListenerIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("batch");

	static final TestQueues.Topology topology = queues.topology();

	static final String ID = queues.id();

	static final String BATCH_QUEUE = queues.name("fifty");

	static final String STOPPING_QUEUE = queues.name("stopping");

	static final String WHOLE_QUEUE = queues.name("whole");

	static final String SINGLES_QUEUE = queues.name("singles");

	static final String BROKER_QUEUE = queues.name("broker");

	static final String QUICK_QUEUE = queues.name("quick");

	static final Duration QUICK_RECEIVE_TIMEOUT = Duration.ofMillis(100);

	static {
		queues.settings((settings) -> settings.topology(topology)
			.retries(2, topology.shortTier())
			.brokerPolicy("linear", 2, "300ms"));
	}

	@Autowired
	InvocationRecorder recorder;

	@Autowired
	Batches batches;

	@Autowired
	RabbitListenerEndpointRegistry endpoints;

	@Autowired
	RetryBackends backends;

	@Test
	void batchOfFiftyWithThreeFailuresAcksFortySevenOnceAndRetriesTheThreeAlone() {
		List<String> healthy = new ArrayList<>();
		for (int i = 0; i < 47; i++) {
			healthy.add(Messages.publish(queues.broker(), "", BATCH_QUEUE, "ok"));
		}
		String recovering = Messages.publish(queues.broker(), "", BATCH_QUEUE, "fail:1");
		String recoveringLater = Messages.publish(queues.broker(), "", BATCH_QUEUE, "fail:2");
		String failing = Messages.publish(queues.broker(), "", BATCH_QUEUE, "always");
		// All fifty wait in the queue, so the consumer takes them as one batch.
		this.endpoints.getListenerContainer("fifty-" + ID).start();

		await().atMost(Duration.ofSeconds(20))
			.until(() -> this.recorder.succeeded(recovering) && this.recorder.succeeded(recoveringLater)
					&& queues.parkingLot(topology.parkingLot()).find(failing) != null);
		assertThat(this.batches.of("fifty").get(0)).hasSize(50);
		healthy.forEach((id) -> assertThat(this.recorder.of(id)).singleElement()
			.satisfies((invocation) -> assertThat(invocation.succeeded()).isTrue()));
		assertThat(this.recorder.retryCounts(recovering)).containsExactly(0L, 1L);
		assertThat(this.recorder.retryCounts(recoveringLater)).containsExactly(0L, 1L, 2L);
		assertThat(this.recorder.retryCounts(failing)).containsExactly(0L, 1L, 2L);
		// Retried alone: no later batch holds a message that was processed.
		assertThat(this.batches.of("fifty").subList(1, this.batches.of("fifty").size()))
			.allSatisfy((batch) -> assertThat(batch).isSubsetOf(recovering, recoveringLater, failing));
		BrokerClient.Received parked = queues.parkingLot(topology.parkingLot()).single(failing);
		assertThat(parked.header(RetryHeaders.PARKED_REASON)).isEqualTo("exhausted");
		assertThat(parked.header(RetryHeaders.COUNT)).isEqualTo("2");
		assertThat(parked.header(RetryHeaders.ERROR)).isEqualTo("scripted failure 3");
		assertThat(parked.properties().getMessageId()).isEqualTo(failing);
		await().atMost(Duration.ofSeconds(5)).until(() -> queues.broker().count(BATCH_QUEUE) == 0);
		// Each retry came back alone (or with the two others), and the container hands a
		// batch over only when no further message came within its receive timeout: every
		// retry is that much later than due, and no more late than the tiers allow
		// besides.
		Duration receiveTimeout = Duration.ofMillis(SimpleMessageListenerContainer.DEFAULT_RECEIVE_TIMEOUT);
		for (String id : List.of(recovering, recoveringLater, failing)) {
			assertThat(this.recorder.gaps(id))
				.allSatisfy((gap) -> assertThat(gap).isBetween(topology.shortTier().plus(receiveTimeout),
						latestRetry(topology.shortTier(), receiveTimeout)));
		}
	}

	@Test
	void aShorterReceiveTimeoutOfAConsumerSideBatchMakesItsRetriesLessLate() {
		String recovering = Messages.publish(queues.broker(), "", QUICK_QUEUE, "fail:1");

		await().atMost(Duration.ofSeconds(20)).until(() -> this.recorder.succeeded(recovering));
		assertThat(this.recorder.gaps(recovering)).singleElement()
			.satisfies((gap) -> assertThat(gap).isBetween(topology.shortTier().plus(QUICK_RECEIVE_TIMEOUT),
					latestRetry(topology.shortTier(), QUICK_RECEIVE_TIMEOUT)));
	}

	// The latest a retry after a delay that is a tier may come to a consumer-side batch:
	// late by at most the smallest tier (the docs' bound) and the container's receive
	// timeout, with 1 s for the broker's latency on a busy machine.
	private static Duration latestRetry(Duration delay, Duration receiveTimeout) {
		return delay.plus(topology.shortTier()).plus(receiveTimeout).plus(Duration.ofSeconds(1));
	}

	@Test
	void listenerThatStopsAtAFailureHasTheMessagesAfterItCalledAgainWithoutSpendingARetry() {
		List<String> ids = new ArrayList<>();
		for (String script : List.of("ok", "ok", "fail:1", "ok", "ok")) {
			ids.add(Messages.publish(queues.broker(), "", STOPPING_QUEUE, script));
		}
		this.endpoints.getListenerContainer("stopping-" + ID).start();

		await().atMost(Duration.ofSeconds(20)).until(() -> ids.stream().allMatch(this.recorder::succeeded));
		List<String> notAttempted = ids.subList(3, 5);
		assertThat(this.batches.of("stopping").get(0)).containsExactlyElementsOf(ids);
		assertThat(this.batches.of("stopping").get(1)).containsExactlyElementsOf(notAttempted);
		IntStream.of(0, 1, 3, 4)
			.forEach((i) -> assertThat(this.recorder.of(ids.get(i))).singleElement()
				.satisfies((invocation) -> assertThat(invocation.retryCount()).isZero()));
		assertThat(this.recorder.retryCounts(ids.get(2))).containsExactly(0L, 1L);
	}

	@Test
	void failureOfTheWholeBatchRetriesEveryMessageOnItsOwn() {
		List<String> ids = new ArrayList<>();
		for (String script : List.of("ok", "fail:1", "ok")) {
			ids.add(Messages.publish(queues.broker(), "", WHOLE_QUEUE, script));
		}
		this.endpoints.getListenerContainer("whole-" + ID).start();

		await().atMost(Duration.ofSeconds(20)).until(() -> ids.stream().allMatch(this.recorder::succeeded));
		// The first call failed as a whole: every message came back as retry 1, and none
		// was parked.
		ids.forEach((id) -> assertThat(this.recorder.of(id)).last()
			.satisfies((invocation) -> assertThat(invocation.retryCount()).isEqualTo(1L)));
		ids.forEach((id) -> assertThat(queues.parkingLot(topology.parkingLot()).find(id)).isNull());
	}

	@Test
	void batchListenerWithoutConsumerSideBatchingGetsEachMessageAsABatchOfOne() {
		String recovering = Messages.publish(queues.broker(), "", SINGLES_QUEUE, "fail:1");
		String failing = Messages.publish(queues.broker(), "", SINGLES_QUEUE, "reject");

		await().atMost(Duration.ofSeconds(20))
			.until(() -> this.recorder.succeeded(recovering)
					&& queues.parkingLot(topology.parkingLot()).find(failing) != null);
		assertThat(this.batches.of("singles")).allSatisfy((batch) -> assertThat(batch).hasSize(1));
		assertThat(this.recorder.retryCounts(recovering)).containsExactly(0L, 1L);
		assertThat(queues.parkingLot(topology.parkingLot()).single(failing).header(RetryHeaders.PARKED_REASON))
			.isEqualTo("not-retryable");
	}

	@Test
	void onTheBrokerBackendEachFailedMessageOfABatchWaitsInItsQueueAndIsCountedByTheBroker() {
		BrokerBackendAssertions.runsOnTheBrokerWhereItCan(this.backends, "onBroker");
		List<String> healthy = new ArrayList<>();
		for (int i = 0; i < 7; i++) {
			healthy.add(Messages.publish(queues.broker(), "", BROKER_QUEUE, "ok"));
		}
		String recovering = Messages.publish(queues.broker(), "", BROKER_QUEUE, "fail:1");
		String failing = Messages.publish(queues.broker(), "", BROKER_QUEUE, "always");
		this.endpoints.getListenerContainer("broker-" + ID).start();

		await().atMost(Duration.ofSeconds(20))
			.until(() -> this.recorder.succeeded(recovering)
					&& queues.parkingLot(topology.parkingLot()).find(failing) != null);
		healthy.forEach((id) -> assertThat(this.recorder.count(id)).isOne());
		assertThat(this.recorder.retryCounts(recovering)).containsExactly(0L, 1L);
		assertThat(this.recorder.retryCounts(failing)).containsExactly(0L, 1L, 2L);
		assertThat(this.recorder.gaps(recovering))
			.allSatisfy((gap) -> assertThat(gap).isGreaterThanOrEqualTo(Duration.ofMillis(250)));
		BrokerClient.Received parked = queues.parkingLot(topology.parkingLot()).single(failing);
		assertThat(parked.header(RetryHeaders.PARKED_REASON)).isEqualTo("exhausted");
		assertThat(parked.header(RetryHeaders.COUNT)).isEqualTo("2");
	}

	/**
	 * Container factories with consumer-side batching, started by the test or at once,
	 * one without, and the quorum queue of the broker backend.
	 */
	@Configuration(proxyBeanMethods = false)
	static class Factories {

		@Bean
		SimpleRabbitListenerContainerFactory batchFactory(ConnectionFactory connectionFactory) {
			SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
			factory.setConnectionFactory(connectionFactory);
			factory.setConsumerBatchEnabled(true);
			factory.setBatchSize(50);
			factory.setPrefetchCount(100);
			factory.setAutoStartup(false);
			return factory;
		}

		@Bean
		SimpleRabbitListenerContainerFactory quickBatchFactory(ConnectionFactory connectionFactory) {
			SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
			factory.setConnectionFactory(connectionFactory);
			factory.setConsumerBatchEnabled(true);
			factory.setBatchSize(50);
			factory.setReceiveTimeout(QUICK_RECEIVE_TIMEOUT.toMillis());
			return factory;
		}

		@Bean
		DirectRabbitListenerContainerFactory directFactory(ConnectionFactory connectionFactory) {
			DirectRabbitListenerContainerFactory factory = new DirectRabbitListenerContainerFactory();
			factory.setConnectionFactory(connectionFactory);
			return factory;
		}

		@Bean
		org.springframework.amqp.core.Queue brokerQueue() {
			return QueueBuilder.durable(BROKER_QUEUE).quorum().build();
		}

	}

	/** The message ids of each batch a listener was called with, per listener. */
	static final class Batches {

		private final Map<String, List<List<String>>> calls = new LinkedHashMap<>();

		synchronized void record(String listener, List<String> ids) {
			this.calls.computeIfAbsent(listener, (name) -> new CopyOnWriteArrayList<>()).add(List.copyOf(ids));
		}

		synchronized List<List<String>> of(String listener) {
			return List.copyOf(this.calls.getOrDefault(listener, List.of()));
		}

	}

	static class BatchListeners extends ScriptedListener {

		private final Batches batches;

		BatchListeners(InvocationRecorder recorder, Batches batches) {
			super(recorder);
			this.batches = batches;
		}

		@RabbitListener(id = "fifty-${test.id}", queuesToDeclare = @Queue("${test.queues.fifty}"),
				containerFactory = "batchFactory")
		@RetryableListener
		void onFifty(List<Message> messages) {
			runAll("fifty", messages);
		}

		@RabbitListener(id = "stopping-${test.id}", queuesToDeclare = @Queue("${test.queues.stopping}"),
				containerFactory = "batchFactory")
		@RetryableListener
		void onStopping(List<org.springframework.messaging.Message<String>> messages) {
			this.batches.record("stopping",
					messages.stream()
						.map((message) -> (String) message.getHeaders().get(AmqpHeaders.MESSAGE_ID))
						.toList());
			for (org.springframework.messaging.Message<String> message : messages) {
				String id = (String) message.getHeaders().get(AmqpHeaders.MESSAGE_ID);
				Long retries = (Long) message.getHeaders().get(AmqpHeaders.RETRY_COUNT);
				long retryCount = (retries != null) ? retries : 0;
				boolean fail = message.getPayload().equals("fail:1") && this.recorder.count(id) == 0;
				this.recorder.record(id, retryCount, !fail);
				if (fail) {
					throw new BatchListenerFailedException("stopped at " + id, new IllegalStateException("scripted"),
							message);
				}
			}
		}

		@RabbitListener(id = "whole-${test.id}", queuesToDeclare = @Queue("${test.queues.whole}"),
				containerFactory = "batchFactory")
		@RetryableListener
		void onWhole(List<Message> messages) {
			this.batches.record("whole", ids(messages));
			for (Message message : messages) {
				// The first failure fails the whole batch: a plain exception.
				run(message);
			}
		}

		@RabbitListener(queuesToDeclare = @Queue("${test.queues.singles}"), batch = "true",
				containerFactory = "directFactory")
		@RetryableListener(noRetryOn = IllegalArgumentException.class)
		void onSingles(List<Message> messages) {
			runAll("singles", messages);
		}

		@RabbitListener(queuesToDeclare = @Queue("${test.queues.quick}"), containerFactory = "quickBatchFactory")
		@RetryableListener
		void onQuick(List<Message> messages) {
			runAll("quick", messages);
		}

		@RabbitListener(id = "broker-${test.id}", queues = "${test.queues.broker}", containerFactory = "batchFactory")
		@RetryableListener(policy = "linear")
		void onBroker(List<Message> messages) {
			runAll("broker", messages);
		}

		// Every message is attempted; those that failed are named with their causes.
		private void runAll(String listener, List<Message> messages) {
			this.batches.record(listener, ids(messages));
			Map<Integer, Throwable> failures = new LinkedHashMap<>();
			for (int i = 0; i < messages.size(); i++) {
				try {
					run(messages.get(i));
				}
				catch (RuntimeException ex) {
					failures.put(i, ex);
				}
			}
			if (!failures.isEmpty()) {
				throw new BatchListenerFailedException(failures.size() + " of " + messages.size() + " failed",
						failures);
			}
		}

		private static List<String> ids(List<Message> messages) {
			return messages.stream().map((message) -> message.getMessageProperties().getMessageId()).toList();
		}

	}

}
