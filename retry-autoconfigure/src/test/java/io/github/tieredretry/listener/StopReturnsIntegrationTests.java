package io.github.tieredretry.listener;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.testsupport.AmqpClientBeans;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.QuorumWorkQueue;
import io.github.tieredretry.testsupport.RetrySettings;
import io.github.tieredretry.testsupport.TestApplications;
import io.github.tieredretry.testsupport.TestBroker;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A stop is not a failure (#30): an application that stops, or a listener container that
 * is stopped and started again, with messages prefetched and not processed, gives them
 * back to their quorum queue without spending any of their retries or of their delivery
 * limit. RabbitMQ 4.3 counts a {@code basic.reject} and a closed channel as a failed
 * delivery ({@code x-delivery-count}, the broker backend's retry count) and a
 * {@code basic.nack} not; RabbitMQ 4.0 to 4.2 (and 3.x quorum queues) count every return,
 * so there a stop costs a message at most one count.
 * <p>
 * Every container type and listener shape, on both backends: 600 messages of 5 ms each,
 * the application stopped once 40 were processed; then every message left is read back
 * with a plain client.
 */
class StopReturnsIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("stopreturns");

	static final TestQueues.Topology topology = queues.topology();

	static final int MESSAGES = 600;

	static Stream<Arguments> listeners() {
		return Stream.of(Arguments.of("simple", "single", "auto"), Arguments.of("direct", "single", "auto"),
				Arguments.of("simple", "batch", "auto"), Arguments.of("simple", "async", "auto"),
				Arguments.of("simple", "single", "tiers"), Arguments.of("direct", "single", "tiers"));
	}

	// The AMQP 1.0 client's container too: at a stop it takes no more messages and lets
	// its listener settle every one it has received.
	static Stream<Arguments> listenersOfBothProtocols() {
		return Stream.concat(listeners(),
				Stream.of(Arguments.of("amqp10", "single", "auto"), Arguments.of("amqp10", "single", "tiers")));
	}

	@ParameterizedTest(name = "{0} container, {1} listener, backend {2}")
	@MethodSource("listenersOfBothProtocols")
	void applicationThatStopsGivesUnprocessedMessagesBackUncounted(String container, String shape, String backend)
			throws Exception {
		String queue = queues.name(container + "-" + shape + "-" + backend);
		Map<String, Object> properties = properties(queue, container, shape, backend);
		if (container.equals("amqp10") && !TestBroker.get().isAtLeast(4, 0)) {
			// Before 4.0 the AMQP 1.0 client cannot consume, and startup says so.
			assertThatThrownBy(() -> TestApplications.run(Amqp10App.class, properties).close())
				.hasStackTraceContaining("needs RabbitMQ 4.0 or later");
			return;
		}
		SlowListener listener;
		try (ConfigurableApplicationContext application = TestApplications
			.run(container.equals("amqp10") ? Amqp10App.class : App.class, properties)) {
			listener = application.getBean(SlowListener.class);
			publish(queue, MESSAGES);
			await().atMost(Duration.ofSeconds(30)).until(() -> listener.processed.size() >= 40);
		}
		Map<String, Long> counts = leftInTheQueue(queue, listener.processed);
		assertThat(counts).as("messages left in the queue").isNotEmpty();
		assertUncounted(counts);
	}

	@ParameterizedTest(name = "{0} container, {1} listener, backend {2}")
	@MethodSource("listeners")
	void containerStoppedAndStartedAgainGivesUnprocessedMessagesBackUncounted(String container, String shape,
			String backend) throws Exception {
		String queue = queues.name("restart-" + container + "-" + shape + "-" + backend);
		Map<String, Object> properties = properties(queue, container, shape, backend);
		try (ConfigurableApplicationContext application = TestApplications.run(App.class, properties)) {
			SlowListener listener = application.getBean(SlowListener.class);
			RabbitListenerEndpointRegistry registry = application.getBean(RabbitListenerEndpointRegistry.class);
			publish(queue, MESSAGES);
			await().atMost(Duration.ofSeconds(30)).until(() -> listener.processed.size() >= 40);
			registry.getListenerContainer("slow").stop();
			int processedBeforeTheStop = listener.processed.size();
			registry.getListenerContainer("slow").start();
			await().atMost(Duration.ofSeconds(60)).until(() -> listener.processed.size() == MESSAGES);
			assertThat(processedBeforeTheStop).as("processed before the stop").isLessThan(MESSAGES);
			assertThat(listener.retried).as("messages that arrived as a retry").isEmpty();
			assertUncounted(listener.counted);
		}
	}

	private static void assertUncounted(Map<String, Long> counts) {
		if (TestBroker.get().isAtLeast(4, 3)) {
			assertThat(counts).as("x-delivery-count of the messages given back")
				.allSatisfy((id, count) -> assertThat(count).isZero());
		}
		else {
			// Every return counts there: at most the one the stop made.
			assertThat(counts).as("x-delivery-count of the messages given back")
				.allSatisfy((id, count) -> assertThat(count).isLessThanOrEqualTo(1));
		}
	}

	// Takes every message left (a message the broker counted a failed delivery of may
	// wait in the queue's delayed retry first) until each message was processed or
	// taken: their x-delivery-count by message id.
	private static Map<String, Long> leftInTheQueue(String queue, Set<String> processed) {
		Map<String, Long> left = new ConcurrentHashMap<>();
		await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
			for (BrokerClient.Received received : queues.broker().drain(queue)) {
				Object count = received.headers().get(RetryHeaders.BROKER_DELIVERY_COUNT);
				String id = received.properties().getMessageId();
				assertThat(left.put(id, (count instanceof Number number) ? number.longValue() : 0L))
					.as("message %s given back twice", id)
					.isNull();
			}
			Set<String> seen = new HashSet<>(processed);
			seen.addAll(left.keySet());
			assertThat(seen).as("messages processed or left in the queue").hasSize(MESSAGES);
		});
		return left;
	}

	// All at once, one confirm wait: the listener must find a full prefetch when it
	// stops.
	private static void publish(String queue, int count) throws Exception {
		Channel channel = queues.broker().channel();
		for (int i = 0; i < count; i++) {
			String id = "m" + i;
			channel.basicPublish("", queue, new AMQP.BasicProperties.Builder().messageId(id).deliveryMode(2).build(),
					id.getBytes());
		}
		channel.waitForConfirmsOrDie(30_000);
	}

	private static Map<String, Object> properties(String queue, String container, String shape, String backend) {
		RetrySettings settings = RetrySettings.application()
			.topology(topology)
			.set("retry.queue-type", "quorum")
			.set("retry.broker.declare-queue-arguments", true)
			.set("retry.defaults.backend", backend)
			.retries(3, "300ms, 600ms, 900ms")
			.set("test.queues.work", queue)
			.set("test.shape", shape);
		if (container.equals("amqp10")) {
			settings.set("test.amqp.initial-credits", 250);
		}
		else {
			settings.set("spring.rabbitmq.listener.type", container)
				.set("spring.rabbitmq.listener." + container + ".prefetch", 250);
		}
		if (shape.equals("batch")) {
			settings.set("spring.rabbitmq.listener.simple.consumer-batch-enabled", true)
				.set("spring.rabbitmq.listener.simple.batch-size", 10);
		}
		return settings.toMap();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(QuorumWorkQueue.class)
	static class App {

		@Bean
		SlowListener slowListener(Environment environment) {
			return switch (environment.getRequiredProperty("test.shape")) {
				case "batch" -> new SlowBatchListener();
				case "async" -> new SlowAsyncListener();
				default -> new SlowSingleListener();
			};
		}

	}

	/**
	 * A listener of the RabbitMQ AMQP 1.0 client, which an application declares itself
	 * (Spring Boot 4.1 auto-configures none of it).
	 */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import({ QuorumWorkQueue.class, AmqpClientBeans.class })
	static class Amqp10App {

		@Bean
		SlowAmqp10Listener slowListener() {
			return new SlowAmqp10Listener();
		}

	}

	/** Takes 5 ms per message, like a listener that writes to a database. */
	abstract static class SlowListener {

		final Set<String> processed = ConcurrentHashMap.newKeySet();

		final Set<String> retried = ConcurrentHashMap.newKeySet();

		/** x-delivery-count of the messages that arrived with one. */
		final Map<String, Long> counted = new ConcurrentHashMap<>();

		void work(Message message) {
			String id = message.getMessageProperties().getMessageId();
			if (message.getMessageProperties().getRetryCount() > 0) {
				this.retried.add(id);
			}
			Object count = message.getMessageProperties().getHeaders().get(RetryHeaders.BROKER_DELIVERY_COUNT);
			if (count instanceof Number number && number.longValue() > 0) {
				this.counted.merge(id, number.longValue(), Math::max);
			}
			long until = System.nanoTime() + Duration.ofMillis(5).toNanos();
			while (System.nanoTime() < until) {
				Thread.onSpinWait();
			}
			this.processed.add(id);
		}

	}

	static class SlowSingleListener extends SlowListener {

		@RabbitListener(id = "slow", queues = "${test.queues.work}")
		@RetryableListener
		void onMessage(Message message) {
			work(message);
		}

	}

	static class SlowAmqp10Listener extends SlowListener {

		@RabbitListener(id = "slow", queues = "${test.queues.work}", containerFactory = "amqpContainerFactory")
		@RetryableListener
		void onMessage(Message message) {
			work(message);
		}

	}

	static class SlowBatchListener extends SlowListener {

		@RabbitListener(id = "slow", queues = "${test.queues.work}", batch = "true")
		@RetryableListener
		void onMessages(List<Message> messages) {
			messages.forEach(this::work);
		}

	}

	static class SlowAsyncListener extends SlowListener {

		@RabbitListener(id = "slow", queues = "${test.queues.work}")
		@RetryableListener
		CompletableFuture<Void> onMessage(Message message) {
			return CompletableFuture.runAsync(() -> work(message));
		}

	}

}
