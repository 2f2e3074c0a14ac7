package io.github.tieredretry.listener;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.Messages;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.ScriptedListener;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitHandler;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.batch.SimpleBatchingStrategy;
import org.springframework.amqp.rabbit.config.DirectRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.core.BatchingRabbitTemplate;
import org.springframework.amqp.rabbit.listener.DirectMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.amqp.support.AmqpHeaders;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tiered retries with Spring Boot's direct container factory, a user-defined factory, a
 * class-level listener, immediate retries and a policy timeout.
 */
@SpringBootTest
@RabbitIntegrationTest
class ContainerVariantsIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("variants");

	static final String ID = queues.id();

	static final String DIRECT_QUEUE = queues.name("direct");

	static final String CUSTOM_QUEUE = queues.name("custom");

	static final String CLASS_LEVEL_QUEUE = queues.name("class");

	static final String IMMEDIATE_QUEUE = queues.name("immediate");

	static final String TIMEOUT_QUEUE = queues.name("timeout");

	static final String PARKING_LOT = queues.name("parking");

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		registry.add("test.id", () -> ID);
		registry.add("test.direct-queue", () -> DIRECT_QUEUE);
		registry.add("test.custom-queue", () -> CUSTOM_QUEUE);
		registry.add("test.class-level-queue", () -> CLASS_LEVEL_QUEUE);
		registry.add("test.immediate-queue", () -> IMMEDIATE_QUEUE);
		registry.add("test.timeout-queue", () -> TIMEOUT_QUEUE);
		registry.add("spring.rabbitmq.listener.type", () -> "direct");
		registry.add("retry.parking-lot", () -> PARKING_LOT);
		registry.add("retry.tiers", () -> "200ms, 400ms, 1013ms");
		// Tier names that other suites share on the test broker, where they are classic
		// queues.
		registry.add("retry.queue-type", () -> "classic");
		registry.add("retry.defaults.max-retries", () -> "2");
		registry.add("retry.defaults.delays", () -> "200ms");
		registry.add("retry.policies.eager.immediate-retries", () -> "2");
		registry.add("retry.policies.bounded.timeout", () -> "300ms");
		registry.add("retry.policies.bounded.max-retries", () -> "5");
	}

	@Autowired
	InvocationRecorder recorder;

	@Autowired
	RabbitListenerEndpointRegistry endpoints;

	@Autowired
	ConnectionFactory connectionFactory;

	@Test
	void directContainerRetriesThroughTiersAndParksAfterTheLastRetry() {
		assertThat(this.endpoints.getListenerContainer("direct-" + ID))
			.isInstanceOf(DirectMessageListenerContainer.class);
		String recovering = Messages.publish(queues.broker(), "", DIRECT_QUEUE, "fail:2");
		String failing = Messages.publish(queues.broker(), "", DIRECT_QUEUE, "always");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(recovering));
		assertThat(this.recorder.of(recovering)).extracting(InvocationRecorder.Invocation::retryCount)
			.containsExactly(0L, 1L, 2L);
		await().atMost(Duration.ofSeconds(10)).until(() -> queues.parkingLot(PARKING_LOT).find(failing) != null);
		assertThat(queues.parkingLot(PARKING_LOT).find(failing).header(RetryHeaders.PARKED_REASON))
			.isEqualTo("exhausted");
		assertThat(this.recorder.count(failing)).isEqualTo(3);
	}

	@Test
	void listenerAskingForAnImmediateAckIsNeitherRetriedNorParked() {
		String id = Messages.publish(queues.broker(), "", DIRECT_QUEUE, "ack-now");
		await().atMost(Duration.ofSeconds(5)).until(() -> this.recorder.count(id) == 1);
		await().during(Duration.ofMillis(1500))
			.atMost(Duration.ofSeconds(5))
			.until(() -> this.recorder.count(id) == 1 && queues.parkingLot(PARKING_LOT).find(id) == null);
		assertThat(queues.broker().count(DIRECT_QUEUE)).isZero();
	}

	@Test
	void listenerAskingNotToBeRedeliveredIsParkedAtOnce() {
		String id = Messages.publish(queues.broker(), "", DIRECT_QUEUE, "dont-requeue");
		await().atMost(Duration.ofSeconds(10)).until(() -> queues.parkingLot(PARKING_LOT).find(id) != null);
		BrokerClient.Received parked = queues.parkingLot(PARKING_LOT).find(id);
		assertThat(parked.header(RetryHeaders.PARKED_REASON)).isEqualTo("not-retryable");
		assertThat(parked.header(RetryHeaders.EXCEPTION)).isEqualTo(AmqpRejectAndDontRequeueException.class.getName());
		assertThat(this.recorder.count(id)).isEqualTo(1);
	}

	@Test
	void producerSideBatchIsParkedWholeWithoutInvokingTheListener() {
		ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
		scheduler.initialize();
		try {
			BatchingRabbitTemplate template = new BatchingRabbitTemplate(this.connectionFactory,
					new SimpleBatchingStrategy(3, 100_000, 30_000), scheduler);
			for (String part : List.of("ok", "ok", "always")) {
				template.send("", DIRECT_QUEUE, new Message(part.getBytes(StandardCharsets.UTF_8)));
			}
			await().atMost(Duration.ofSeconds(10))
				.until(() -> !queues.parkingLot(PARKING_LOT)
					.from(DIRECT_QUEUE)
					.stream()
					.filter((message) -> message.headers().containsKey("springBatchFormat"))
					.toList()
					.isEmpty());
			BrokerClient.Received batch = queues.parkingLot(PARKING_LOT)
				.from(DIRECT_QUEUE)
				.stream()
				.filter((message) -> message.headers().containsKey("springBatchFormat"))
				.findFirst()
				.orElseThrow();
			assertThat(batch.header(RetryHeaders.PARKED_REASON)).isEqualTo("not-retryable");
			assertThat(batch.header(RetryHeaders.EXCEPTION)).endsWith("ProducerBatchNotSupportedException");
			assertThat(batch.bodyText()).contains("ok").contains("always");
		}
		finally {
			scheduler.shutdown();
		}
	}

	@Test
	void userDefinedContainerFactoryIsSupported() {
		assertThat(this.endpoints.getListenerContainer("custom-" + ID))
			.isInstanceOf(SimpleMessageListenerContainer.class);
		String id = Messages.publish(queues.broker(), "", CUSTOM_QUEUE, "fail:1");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(id));
		assertThat(this.recorder.count(id)).isEqualTo(2);
	}

	@Test
	void classLevelListenerRetriesEveryHandler() {
		String id = Messages.publish(queues.broker(), "", CLASS_LEVEL_QUEUE, "fail:1");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(id));
		assertThat(this.recorder.of(id)).extracting(InvocationRecorder.Invocation::retryCount).containsExactly(0L, 1L);
	}

	@Test
	void immediateRetriesHappenInPlaceBeforeAnyTieredRetry() {
		String recovering = Messages.publish(queues.broker(), "", IMMEDIATE_QUEUE, "fail:2");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(recovering));
		// Three attempts on the first delivery, no tier involved.
		assertThat(this.recorder.of(recovering)).extracting(InvocationRecorder.Invocation::retryCount)
			.containsExactly(0L, 0L, 0L);
		assertThat(this.recorder.gaps(recovering))
			.allSatisfy((gap) -> assertThat(gap).isLessThan(Duration.ofMillis(200)));

		String tiered = Messages.publish(queues.broker(), "", IMMEDIATE_QUEUE, "fail:4");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(tiered));
		// Three in place, then the tiered retries: one attempt each.
		assertThat(this.recorder.of(tiered)).extracting(InvocationRecorder.Invocation::retryCount)
			.containsExactly(0L, 0L, 0L, 1L, 2L);
	}

	@Test
	void noRetryIsScheduledBeyondThePolicyTimeout() {
		String id = Messages.publish(queues.broker(), "", TIMEOUT_QUEUE, "always");
		await().atMost(Duration.ofSeconds(10)).until(() -> queues.parkingLot(PARKING_LOT).find(id) != null);
		BrokerClient.Received parked = queues.parkingLot(PARKING_LOT).find(id);
		assertThat(parked.header(RetryHeaders.PARKED_REASON)).isEqualTo("timeout");
		// Retry 1 falls due 200 ms after the first failure; retry 2 would fall due after
		// 300 ms.
		assertThat(parked.header(RetryHeaders.COUNT)).isEqualTo("1");
		assertThat(this.recorder.count(id)).isEqualTo(2);
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@Bean
		InvocationRecorder invocationRecorder() {
			return new InvocationRecorder();
		}

		@Bean
		SimpleRabbitListenerContainerFactory customFactory(ConnectionFactory connectionFactory) {
			SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
			factory.setConnectionFactory(connectionFactory);
			factory.setConcurrentConsumers(2);
			factory.setPrefetchCount(5);
			return factory;
		}

		@Bean
		Queue directQueue() {
			return new Queue(DIRECT_QUEUE);
		}

		@Bean
		Queue customQueue() {
			return new Queue(CUSTOM_QUEUE);
		}

		@Bean
		Queue classLevelQueue() {
			return new Queue(CLASS_LEVEL_QUEUE);
		}

		@Bean
		Queue immediateQueue() {
			return new Queue(IMMEDIATE_QUEUE);
		}

		@Bean
		Queue timeoutQueue() {
			return new Queue(TIMEOUT_QUEUE);
		}

		@Bean
		Listeners listeners(InvocationRecorder recorder) {
			return new Listeners(recorder);
		}

		@Bean
		ClassLevelListener classLevelListener(InvocationRecorder recorder) {
			return new ClassLevelListener(recorder);
		}

		@Bean
		DirectFactoryCheck directFactoryCheck(
				org.springframework.beans.factory.ObjectProvider<DirectRabbitListenerContainerFactory> factory) {
			return new DirectFactoryCheck(factory.getIfAvailable());
		}

	}

	/**
	 * Proves Spring Boot's factory keeps its type for injection although it is proxied.
	 */
	record DirectFactoryCheck(DirectRabbitListenerContainerFactory factory) {
		DirectFactoryCheck {
			assertThat(factory).as("auto-configured direct factory injectable by type").isNotNull();
		}
	}

	static class Listeners extends ScriptedListener {

		Listeners(InvocationRecorder recorder) {
			super(recorder);
		}

		@RabbitListener(id = "direct-${test.id}", queues = "${test.direct-queue}")
		@RetryableListener
		void onDirect(Message message) {
			run(message);
		}

		@RabbitListener(id = "custom-${test.id}", queues = "${test.custom-queue}", containerFactory = "customFactory")
		@RetryableListener
		void onCustom(Message message) {
			run(message);
		}

		@RabbitListener(queues = "${test.immediate-queue}")
		@RetryableListener(policy = "eager")
		void onImmediate(Message message) {
			run(message);
		}

		@RabbitListener(queues = "${test.timeout-queue}")
		@RetryableListener(policy = "bounded")
		void onTimeout(Message message) {
			run(message);
		}

	}

	@RabbitListener(queues = "${test.class-level-queue}")
	@RetryableListener
	static class ClassLevelListener extends ScriptedListener {

		ClassLevelListener(InvocationRecorder recorder) {
			super(recorder);
		}

		@RabbitHandler
		void onText(String text, @Header(name = "amqp_messageId") String messageId,
				@Header(name = AmqpHeaders.RETRY_COUNT, required = false) Long retryCount) {
			long retries = (retryCount != null) ? retryCount : 0;
			int attempt = this.recorder.count(messageId) + 1;
			boolean fail = text.startsWith("fail:") && attempt <= Integer.parseInt(text.substring(5));
			this.recorder.record(messageId, retries, !fail);
			if (fail) {
				throw new IllegalStateException("class-level failure " + attempt);
			}
		}

		@RabbitHandler
		void onBytes(byte[] bytes) {
			onText(new String(bytes, StandardCharsets.UTF_8), "bytes", 0L);
		}

	}

}
