package io.github.tieredretry.autoconfigure;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import com.rabbitmq.client.amqp.Consumer;
import io.github.tieredretry.annotation.Breaker;
import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.listener.RetryableListenerRegistry;
import io.github.tieredretry.testsupport.AmqpClientBeans;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.core.AmqpAcknowledgment;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbitmq.client.AmqpConnectionFactory;
import org.springframework.amqp.rabbitmq.client.config.RabbitAmqpListenerContainerFactory;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The listener set-ups of Spring AMQP's RabbitMQ AMQP 1.0 client that startup refuses,
 * each with the reason and the fix: a circuit breaker, a {@code batchSize}, a result that
 * completes later, a parameter that settles the delivery, more than one queue.
 * <p>
 * Each is refused when the container factory creates the listener's container, before
 * anything connects: on every broker version and without one (the AMQP 1.0 connection
 * here points at a port nothing listens on). On RabbitMQ 3.10 a listener that passes
 * these checks is refused later, when the broker's version is known (the client needs
 * 4.0): {@code AmqpClientListenerIntegrationTests} asserts that one.
 */
class AmqpClientListenerInstallationTests extends AutoConfigurationTestSupport {

	private final ApplicationContextRunner amqpClientRunner = this.contextRunner
		.withUserConfiguration(AmqpClientBeans.class);

	@Test
	void plainListenerOfTheAmqpClientIsAppliedWithoutConnecting() {
		this.amqpClientRunner.withUserConfiguration(PlainListener.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(RetryableListenerRegistry.class).listeners()).singleElement()
				.satisfies((info) -> assertThat(info.queues()).containsExactly("orders"));
		});
	}

	@Test
	void circuitBreakerFailsStartupSayingToDisableItOrUseAnAmqp091Factory() {
		this.amqpClientRunner.withUserConfiguration(BreakerListener.class)
			.run(failsWith("BreakerListener#onOrder",
					"circuit breakers are not supported on listeners of the RabbitMQ AMQP 1.0 client",
					"breaker = Breaker.OFF", "AMQP 0-9-1 container factory"));
	}

	@Test
	void circuitBreakerFromThePropertiesFailsStartupToo() {
		this.amqpClientRunner.withPropertyValues("retry.defaults.breaker.enabled=true")
			.withUserConfiguration(PlainListener.class)
			.run(failsWith("PlainListener#onOrder",
					"circuit breakers are not supported on listeners of the RabbitMQ AMQP 1.0 client",
					"retry.defaults.breaker.enabled=false"));
	}

	@Test
	void batchSizeFailsStartupSayingABatchIsSettledAsAWhole() {
		this.amqpClientRunner.withUserConfiguration(BatchFactoryConfiguration.class, BatchListener.class)
			.run(failsWith("BatchListener#onOrders",
					"batch listeners of the RabbitMQ AMQP 1.0 client are not supported", "settled as a whole",
					"remove batchSize"));
	}

	@Test
	void resultThatCompletesLaterFailsStartupSayingToReturnVoidOrAValue() {
		this.amqpClientRunner.withUserConfiguration(AsyncListener.class)
			.run(failsWith("AsyncListener#onOrder",
					"asynchronous listeners of the RabbitMQ AMQP 1.0 client are not supported",
					"return void or a value"));
	}

	@Test
	void contextParameterThatSettlesFailsStartupSayingToThrowInstead() {
		this.amqpClientRunner.withUserConfiguration(ContextListener.class)
			.run(failsWith("ContextListener#onOrder", "it takes the delivery's Consumer.Context to settle it",
					"remove the parameter and let the listener throw"));
	}

	@Test
	void acknowledgmentParameterThatSettlesFailsStartupSayingToThrowInstead() {
		this.amqpClientRunner.withUserConfiguration(AcknowledgmentListener.class)
			.run(failsWith("AcknowledgmentListener#onOrder", "it takes the delivery's AmqpAcknowledgment to settle it",
					"remove the parameter and let the listener throw"));
	}

	@Test
	void secondQueueFailsStartupSayingToGiveItOneQueue() {
		this.amqpClientRunner.withUserConfiguration(TwoQueuesListener.class)
			.run(failsWith("TwoQueuesListener#onOrder",
					"a listener of the RabbitMQ AMQP 1.0 client must consume exactly one queue", "Give it one queue"));
	}

	@Test
	void amqpClientListenerWithABreakerFailsStartupNamingTheAnnotationAttributeOrThePropertyThatTurnsItOff() {
		String unsupported = "circuit breakers are not supported on listeners of the RabbitMQ AMQP 1.0 client";
		this.amqpClientRunner.withUserConfiguration(BreakerListener.class)
			.run(failsWith("BreakerListener#onOrder", unsupported,
					"Give it @RetryableListener(breaker = Breaker.OFF) instead of Breaker.ON, or give it an AMQP "
							+ "0-9-1 container factory (Spring Boot's default)."));
		this.amqpClientRunner.withPropertyValues("retry.defaults.breaker.enabled=true")
			.withUserConfiguration(PlainListener.class)
			.run(failsWith("PlainListener#onOrder", unsupported,
					"Give it @RetryableListener(breaker = Breaker.OFF), or set retry.defaults.breaker.enabled=false, "
							+ "or give it an AMQP 0-9-1 container factory"));
		this.amqpClientRunner.withPropertyValues("retry.policies.payments.breaker.enabled=true")
			.withUserConfiguration(PolicyListener.class)
			.run(failsWith("PolicyListener#onOrder", unsupported, "Give it @RetryableListener(breaker = "
					+ "Breaker.OFF), or set retry.policies.payments.breaker.enabled=false, or give it"));
		// What the fix says works: the annotation attribute, and the property.
		this.amqpClientRunner.withPropertyValues("retry.defaults.breaker.enabled=true")
			.withUserConfiguration(BreakerOffListener.class)
			.run((context) -> assertThat(context).hasNotFailed());
		this.amqpClientRunner
			.withPropertyValues("retry.defaults.breaker.enabled=true", "retry.policies.payments.breaker.enabled=false")
			.withUserConfiguration(PolicyListener.class)
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Configuration(proxyBeanMethods = false)
	static class BatchFactoryConfiguration {

		@Bean
		RabbitAmqpListenerContainerFactory amqpBatchContainerFactory(AmqpConnectionFactory connectionFactory) {
			RabbitAmqpListenerContainerFactory factory = new RabbitAmqpListenerContainerFactory(connectionFactory);
			factory.setBatchSize(10);
			return factory;
		}

	}

	static class PlainListener {

		@RabbitListener(queues = "orders", containerFactory = "amqpContainerFactory", autoStartup = "false")
		@RetryableListener
		void onOrder(Message message) {
		}

	}

	static class BreakerListener {

		@RabbitListener(queues = "orders", containerFactory = "amqpContainerFactory", autoStartup = "false")
		@RetryableListener(breaker = Breaker.ON)
		void onOrder(Message message) {
		}

	}

	static class BreakerOffListener {

		@RabbitListener(queues = "orders", containerFactory = "amqpContainerFactory", autoStartup = "false")
		@RetryableListener(breaker = Breaker.OFF)
		void onOrder(Message message) {
		}

	}

	static class PolicyListener {

		@RabbitListener(queues = "orders", containerFactory = "amqpContainerFactory", autoStartup = "false")
		@RetryableListener(policy = "payments")
		void onOrder(Message message) {
		}

	}

	static class BatchListener {

		@RabbitListener(queues = "orders", containerFactory = "amqpBatchContainerFactory", autoStartup = "false")
		@RetryableListener
		void onOrders(List<Message> messages) {
		}

	}

	static class AsyncListener {

		@RabbitListener(queues = "orders", containerFactory = "amqpContainerFactory", autoStartup = "false")
		@RetryableListener
		CompletableFuture<Void> onOrder(Message message) {
			return CompletableFuture.completedFuture(null);
		}

	}

	static class ContextListener {

		@RabbitListener(queues = "orders", containerFactory = "amqpContainerFactory", autoStartup = "false")
		@RetryableListener
		void onOrder(Message message, Consumer.Context context) {
		}

	}

	static class AcknowledgmentListener {

		@RabbitListener(queues = "orders", containerFactory = "amqpContainerFactory", autoStartup = "false")
		@RetryableListener
		void onOrder(Message message, AmqpAcknowledgment acknowledgment) {
		}

	}

	static class TwoQueuesListener {

		@RabbitListener(queues = { "orders", "payments" }, containerFactory = "amqpContainerFactory",
				autoStartup = "false")
		@RetryableListener
		void onOrder(Message message) {
		}

	}

}
