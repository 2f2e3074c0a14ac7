package io.github.tieredretry.listener;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.Messages;
import io.github.tieredretry.testsupport.ParkingLot;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.Script;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitHandler;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.config.DirectRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
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
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tiered retries with Spring Boot's direct container factory, a user-defined factory, a class-level
 * listener, immediate retries and a policy timeout.
 */
@SpringBootTest
@RabbitIntegrationTest
class ContainerVariantsIntegrationTests {

	static final String ID = UUID.randomUUID().toString().substring(0, 8);

	static final String DIRECT_QUEUE = "variants-direct-" + ID;

	static final String CUSTOM_QUEUE = "variants-custom-" + ID;

	static final String CLASS_LEVEL_QUEUE = "variants-class-" + ID;

	static final String IMMEDIATE_QUEUE = "variants-immediate-" + ID;

	static final String TIMEOUT_QUEUE = "variants-timeout-" + ID;

	static final String PARKING_LOT = "variants-parking-" + ID;

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
		registry.add("retry.tiers", () -> "200ms, 400ms, 1s");
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

	BrokerClient broker;

	ParkingLot parkingLot;

	@BeforeEach
	void openClient() {
		this.broker = new BrokerClient();
		this.parkingLot = new ParkingLot(this.broker, PARKING_LOT);
	}

	@AfterEach
	void closeClient() {
		this.broker.close();
	}

	@AfterAll
	static void deleteQueues() {
		try (BrokerClient client = new BrokerClient()) {
			List.of(DIRECT_QUEUE, CUSTOM_QUEUE, CLASS_LEVEL_QUEUE, IMMEDIATE_QUEUE, TIMEOUT_QUEUE, PARKING_LOT)
				.forEach(client::deleteQueue);
		}
	}

	@Test
	void directContainerRetriesThroughTiersAndParksAfterTheLastRetry() {
		assertThat(this.endpoints.getListenerContainer("direct-" + ID)).isInstanceOf(DirectMessageListenerContainer.class);
		String recovering = Messages.publish(this.broker, "", DIRECT_QUEUE, "fail:2");
		String failing = Messages.publish(this.broker, "", DIRECT_QUEUE, "always");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(recovering));
		assertThat(this.recorder.of(recovering)).extracting(InvocationRecorder.Invocation::retryCount)
			.containsExactly(0L, 1L, 2L);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.parkingLot.find(failing) != null);
		assertThat(this.parkingLot.find(failing).header(RetryHeaders.PARKED_REASON)).isEqualTo("exhausted");
		assertThat(this.recorder.count(failing)).isEqualTo(3);
	}

	@Test
	void listenerAskingForAnImmediateAckIsNeitherRetriedNorParked() {
		String id = Messages.publish(this.broker, "", DIRECT_QUEUE, "ack-now");
		await().atMost(Duration.ofSeconds(5)).until(() -> this.recorder.count(id) == 1);
		await().during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(5))
			.until(() -> this.recorder.count(id) == 1 && this.parkingLot.find(id) == null);
		assertThat(this.broker.count(DIRECT_QUEUE)).isZero();
	}

	@Test
	void userDefinedContainerFactoryIsSupported() {
		assertThat(this.endpoints.getListenerContainer("custom-" + ID)).isInstanceOf(SimpleMessageListenerContainer.class);
		String id = Messages.publish(this.broker, "", CUSTOM_QUEUE, "fail:1");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(id));
		assertThat(this.recorder.count(id)).isEqualTo(2);
	}

	@Test
	void classLevelListenerRetriesEveryHandler() {
		String id = Messages.publish(this.broker, "", CLASS_LEVEL_QUEUE, "fail:1");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(id));
		assertThat(this.recorder.of(id)).extracting(InvocationRecorder.Invocation::retryCount).containsExactly(0L, 1L);
	}

	@Test
	void immediateRetriesHappenInPlaceBeforeAnyTieredRetry() {
		String recovering = Messages.publish(this.broker, "", IMMEDIATE_QUEUE, "fail:2");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(recovering));
		// Three attempts on the first delivery, no tier involved.
		assertThat(this.recorder.of(recovering)).extracting(InvocationRecorder.Invocation::retryCount)
			.containsExactly(0L, 0L, 0L);
		assertThat(this.recorder.gaps(recovering)).allSatisfy((gap) -> assertThat(gap).isLessThan(Duration.ofMillis(200)));

		String tiered = Messages.publish(this.broker, "", IMMEDIATE_QUEUE, "fail:4");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(tiered));
		// Three in place, then the tiered retries: one attempt each.
		assertThat(this.recorder.of(tiered)).extracting(InvocationRecorder.Invocation::retryCount)
			.containsExactly(0L, 0L, 0L, 1L, 2L);
	}

	@Test
	void noRetryIsScheduledBeyondThePolicyTimeout() {
		String id = Messages.publish(this.broker, "", TIMEOUT_QUEUE, "always");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.parkingLot.find(id) != null);
		BrokerClient.Received parked = this.parkingLot.find(id);
		assertThat(parked.header(RetryHeaders.PARKED_REASON)).isEqualTo("timeout");
		// Retry 1 falls due 200 ms after the first failure; retry 2 would fall due after 300 ms.
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

	/** Proves Spring Boot's factory keeps its type for injection although it is proxied. */
	record DirectFactoryCheck(DirectRabbitListenerContainerFactory factory) {
		DirectFactoryCheck {
			assertThat(factory).as("auto-configured direct factory injectable by type").isNotNull();
		}
	}

	static class Listeners {

		private final InvocationRecorder recorder;

		Listeners(InvocationRecorder recorder) {
			this.recorder = recorder;
		}

		@RabbitListener(id = "direct-${test.id}", queues = "${test.direct-queue}")
		@RetryableListener
		void onDirect(Message message) {
			Script.run(message, this.recorder);
		}

		@RabbitListener(id = "custom-${test.id}", queues = "${test.custom-queue}", containerFactory = "customFactory")
		@RetryableListener
		void onCustom(Message message) {
			Script.run(message, this.recorder);
		}

		@RabbitListener(queues = "${test.immediate-queue}")
		@RetryableListener(policy = "eager")
		void onImmediate(Message message) {
			Script.run(message, this.recorder);
		}

		@RabbitListener(queues = "${test.timeout-queue}")
		@RetryableListener(policy = "bounded")
		void onTimeout(Message message) {
			Script.run(message, this.recorder);
		}

	}

	@RabbitListener(queues = "${test.class-level-queue}")
	@RetryableListener
	static class ClassLevelListener {

		private final InvocationRecorder recorder;

		ClassLevelListener(InvocationRecorder recorder) {
			this.recorder = recorder;
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
