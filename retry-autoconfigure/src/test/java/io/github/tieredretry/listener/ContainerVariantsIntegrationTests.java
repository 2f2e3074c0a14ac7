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
import io.github.tieredretry.testsupport.RecordingApplication;
import io.github.tieredretry.testsupport.ScheduledRetries;
import io.github.tieredretry.testsupport.ScriptedListener;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.Queue;
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
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tiered retries with Spring Boot's direct container factory, a user-defined factory, a
 * class-level listener, immediate retries and a policy timeout.
 */
@SpringBootTest(classes = { RecordingApplication.class, ContainerVariantsIntegrationTests.Factories.class,
		ContainerVariantsIntegrationTests.Listeners.class, ContainerVariantsIntegrationTests.ClassLevelListener.class })
@RabbitIntegrationTest
class ContainerVariantsIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("variants")
		.settings((settings) -> settings.classicTiers("200ms, 400ms, 1013ms")
			.retries(2, "200ms")
			.set("spring.rabbitmq.listener.type", "direct")
			.set("retry.policies.eager.immediate-retries", 2)
			.set("retry.policies.bounded.timeout", "300ms")
			.set("retry.policies.bounded.max-retries", 5));

	static final String ID = queues.id();

	static final String DIRECT_QUEUE = queues.name("direct");

	static final String CUSTOM_QUEUE = queues.name("custom");

	static final String CLASS_LEVEL_QUEUE = queues.name("class");

	static final String IMMEDIATE_QUEUE = queues.name("immediate");

	static final String TIMEOUT_QUEUE = queues.name("timeout");

	@Autowired
	InvocationRecorder recorder;

	@Autowired
	RabbitListenerEndpointRegistry endpoints;

	@Autowired
	ConnectionFactory connectionFactory;

	@Autowired
	ScheduledRetries scheduled;

	@Test
	void directContainerRetriesThroughTiersAndParksAfterTheLastRetry() {
		assertThat(this.endpoints.getListenerContainer("direct-" + ID))
			.isInstanceOf(DirectMessageListenerContainer.class);
		String recovering = Messages.publish(queues.broker(), "", DIRECT_QUEUE, "fail:2");
		String failing = Messages.publish(queues.broker(), "", DIRECT_QUEUE, "always");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(recovering));
		assertThat(this.recorder.retryCounts(recovering)).containsExactly(0L, 1L, 2L);
		assertThat(queues.parkingLot().awaitParked(failing, Duration.ofSeconds(10)).header(RetryHeaders.PARKED_REASON))
			.isEqualTo("exhausted");
		assertThat(this.recorder.count(failing)).isEqualTo(3);
	}

	@Test
	void listenerAskingForAnImmediateAckIsNeitherRetriedNorParked() {
		String id = Messages.publish(queues.broker(), "", DIRECT_QUEUE, "ack-now");
		await().atMost(Duration.ofSeconds(5)).until(() -> this.recorder.count(id) == 1);
		// A retry or a parking of it would have been forwarded before that of a marker
		// that fails once now, and a retry come back before the marker's.
		String marker = Messages.publish(queues.broker(), "", DIRECT_QUEUE, "fail:1");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(marker));
		assertThat(this.recorder.count(id)).isOne();
		assertThat(this.scheduled.of(id)).isEmpty();
		assertThat(queues.parkingLot().find(id)).isNull();
		assertThat(queues.broker().count(DIRECT_QUEUE)).isZero();
	}

	@Test
	void listenerAskingNotToBeRedeliveredIsParkedAtOnce() {
		String id = Messages.publish(queues.broker(), "", DIRECT_QUEUE, "dont-requeue");
		BrokerClient.Received parked = queues.parkingLot().awaitParked(id, Duration.ofSeconds(10));
		parked.assertParked("not-retryable", AmqpRejectAndDontRequeueException.class);
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
				.until(() -> !queues.parkingLot()
					.from(DIRECT_QUEUE)
					.stream()
					.filter((message) -> message.headers().containsKey("springBatchFormat"))
					.toList()
					.isEmpty());
			BrokerClient.Received batch = queues.parkingLot()
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
		assertThat(this.recorder.retryCounts(id)).containsExactly(0L, 1L);
	}

	@Test
	void immediateRetriesHappenInPlaceBeforeAnyTieredRetry() {
		String recovering = Messages.publish(queues.broker(), "", IMMEDIATE_QUEUE, "fail:2");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(recovering));
		// Three attempts on the first delivery, no tier involved.
		assertThat(this.recorder.retryCounts(recovering)).containsExactly(0L, 0L, 0L);
		assertThat(this.recorder.gaps(recovering))
			.allSatisfy((gap) -> assertThat(gap).isLessThan(Duration.ofMillis(200)));

		String tiered = Messages.publish(queues.broker(), "", IMMEDIATE_QUEUE, "fail:4");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(tiered));
		// Three in place, then the tiered retries: one attempt each.
		assertThat(this.recorder.retryCounts(tiered)).containsExactly(0L, 0L, 0L, 1L, 2L);
	}

	@Test
	void noRetryIsScheduledBeyondThePolicyTimeout() {
		String id = Messages.publish(queues.broker(), "", TIMEOUT_QUEUE, "always");
		BrokerClient.Received parked = queues.parkingLot().awaitParked(id, Duration.ofSeconds(10));
		assertThat(parked.header(RetryHeaders.PARKED_REASON)).isEqualTo("timeout");
		// Retry 1 falls due 200 ms after the first failure; retry 2 would fall due after
		// 300 ms.
		assertThat(parked.header(RetryHeaders.COUNT)).isEqualTo("1");
		assertThat(this.recorder.count(id)).isEqualTo(2);
	}

	/** A factory of the application's own, and the check of Spring Boot's. */
	@Configuration(proxyBeanMethods = false)
	static class Factories {

		@Bean
		SimpleRabbitListenerContainerFactory customFactory(ConnectionFactory connectionFactory) {
			SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
			factory.setConnectionFactory(connectionFactory);
			factory.setConcurrentConsumers(2);
			factory.setPrefetchCount(5);
			return factory;
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

		@RabbitListener(id = "direct-${test.id}", queuesToDeclare = @Queue("${test.queues.direct}"))
		@RetryableListener
		void onDirect(Message message) {
			run(message);
		}

		@RabbitListener(id = "custom-${test.id}", queuesToDeclare = @Queue("${test.queues.custom}"),
				containerFactory = "customFactory")
		@RetryableListener
		void onCustom(Message message) {
			run(message);
		}

		@RabbitListener(queuesToDeclare = @Queue("${test.queues.immediate}"))
		@RetryableListener(policy = "eager")
		void onImmediate(Message message) {
			run(message);
		}

		@RabbitListener(queuesToDeclare = @Queue("${test.queues.timeout}"))
		@RetryableListener(policy = "bounded")
		void onTimeout(Message message) {
			run(message);
		}

	}

	@RabbitListener(queuesToDeclare = @Queue("${test.queues.class}"))
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
