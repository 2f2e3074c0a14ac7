package io.github.tieredretry.autoconfigure;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.internal.topology.RetryDeclarables;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.listener.RetryableListenerConfigurationException;
import io.github.tieredretry.testbrokers.Ports;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.amqp.core.Declarable;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitHandler;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ContextConsumer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.messaging.handler.annotation.SendTo;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The application the auto-configuration tests start, and what they share: listeners and
 * configurations.
 * <p>
 * No broker is needed, and none is touched: the application points at a local port
 * nothing listens on, so the topology initializer only warns, and listener containers are
 * created but never started. That also keeps these tests from declaring the default-named
 * retry topology on a shared broker.
 */
abstract class AutoConfigurationTestSupport {

	static final int UNREACHABLE_PORT = Ports.unused();

	final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RabbitAutoConfiguration.class, TieredRetryAutoConfiguration.class,
				RetryDisabledAutoConfiguration.class))
		.withPropertyValues("spring.rabbitmq.host=127.0.0.1", "spring.rabbitmq.port=" + UNREACHABLE_PORT,
				"spring.rabbitmq.listener.simple.auto-startup=false",
				"spring.rabbitmq.listener.direct.auto-startup=false");

	static ContextConsumer<AssertableApplicationContext> failsWith(String listener, String... problems) {
		return (context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			assertThat(NestedExceptionUtils.getMostSpecificCause(failure))
				.isInstanceOf(RetryableListenerConfigurationException.class)
				.hasMessageContaining(listener)
				.hasMessageContainingAll(problems);
			FailureAnalysis analysis = new RetryConfigurationFailureAnalyzer().analyze(failure);
			assertThat(analysis).isNotNull();
			assertThat(analysis.getDescription()).startsWith("@RetryableListener on ")
				.contains(listener)
				.contains(problems[0]);
			assertThat(analysis.getAction()).isNotBlank();
			assertThat(analysis.getCause()).isInstanceOf(RetryableListenerConfigurationException.class);
		};
	}

	static Object listenerOf(AssertableApplicationContext context, String id) {
		AbstractMessageListenerContainer container = (AbstractMessageListenerContainer) context
			.getBean(RabbitListenerEndpointRegistry.class)
			.getListenerContainer(id);
		assertThat(container).as("container %s", id).isNotNull();
		return container.getMessageListener();
	}

	/**
	 * The simple name of the class of the container's message listener:
	 * {@code RetryingMessageListener} or {@code RetryingBatchMessageListener} where the
	 * starter wrapped it.
	 */
	static String listenerTypeOf(AssertableApplicationContext context, String id) {
		return listenerOf(context, id).getClass().getSimpleName();
	}

	/**
	 * What the admin declares once the topology has been checked against the broker.
	 */
	static RetryDeclarables checked(AssertableApplicationContext context) {
		return new RetryDeclarables(context.getBean(RetryTopology.class), () -> true);
	}

	static <T extends Declarable> List<T> declared(RetryDeclarables declarables, Class<T> type) {
		return declarables.getDeclarables().stream().filter(type::isInstance).map(type::cast).toList();
	}

	static List<String> queueNames(RetryDeclarables declarables) {
		return declared(declarables, Queue.class).stream().map(Queue::getName).toList();
	}

	static Queue queue(RetryDeclarables declarables, String name) {
		return declared(declarables, Queue.class).stream()
			.filter((queue) -> queue.getName().equals(name))
			.findFirst()
			.orElseThrow(() -> new AssertionError("No queue " + name));
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ RabbitAutoConfiguration.class, TieredRetryAutoConfiguration.class })
	static class EmptyApplication {

	}

	@Configuration(proxyBeanMethods = false)
	static class UserPublisherConnectionFactoryConfiguration {

		@Bean(name = TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY, defaultCandidate = false)
		CachingConnectionFactory userPublisherConnectionFactory() {
			CachingConnectionFactory factory = new CachingConnectionFactory("publisher.example.com");
			factory.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.SIMPLE);
			return factory;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UnconfirmedPublisherConnectionFactoryConfiguration {

		@Bean(name = TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY, defaultCandidate = false)
		CachingConnectionFactory userPublisherConnectionFactory() {
			return new CachingConnectionFactory("publisher.example.com");
		}

	}

	record ConnectionFactoryConsumer(ConnectionFactory connectionFactory) {
	}

	@Configuration(proxyBeanMethods = false)
	static class ConnectionFactoryConsumerConfiguration {

		@Bean
		ConnectionFactoryConsumer connectionFactoryConsumer(ConnectionFactory connectionFactory) {
			return new ConnectionFactoryConsumer(connectionFactory);
		}

	}

	static final class FinalContainerFactory extends SimpleRabbitListenerContainerFactory {

	}

	@Configuration(proxyBeanMethods = false)
	static class FinalFactoryConfiguration {

		@Bean
		FinalContainerFactory finalFactory(ConnectionFactory connectionFactory) {
			FinalContainerFactory factory = new FinalContainerFactory();
			factory.setConnectionFactory(connectionFactory);
			factory.setAutoStartup(false);
			return factory;
		}

	}

	static class OrderListener {

		@RabbitListener(id = "orders", queues = "orders")
		@RetryableListener
		void onOrder(String order) {
		}

	}

	static class InvoiceListener {

		@RabbitListener(id = "invoices", queues = "invoices")
		@RetryableListener(maxRetries = 1)
		void onInvoice(String invoice) {
		}

	}

	static class PlainListener {

		@RabbitListener(id = "plain", queues = "plain")
		void onMessage(String message) {
		}

	}

	static class PaymentListener {

		@RabbitListener(id = "payments", queues = "payments")
		@RetryableListener(policy = "payments", maxRetries = 2)
		void onPayment(String payment) {
		}

	}

	@RabbitListener(id = "class-level", queues = "class-level")
	@RetryableListener
	static class ClassLevelListener {

		@RabbitHandler
		void onText(String text) {
		}

	}

	@RabbitListener(id = "annotated-handler", queues = "annotated-handler")
	static class AnnotatedHandlerListener {

		@RabbitHandler
		@RetryableListener
		void onOrder(String order) {
		}

	}

	static class UnknownPolicyListener {

		@RabbitListener(queues = "orders")
		@RetryableListener(policy = "paymnets")
		void onOrder(String order) {
		}

	}

	static class UnparsableDelayListener {

		@RabbitListener(queues = "orders")
		@RetryableListener(delays = { "10s", "10 parsecs" })
		void onOrder(String order) {
		}

	}

	static class UnitlessDelayListener {

		@RabbitListener(queues = "orders")
		@RetryableListener(delays = { "10", "1h" })
		void onOrder(String order) {
		}

	}

	static class NegativeDelayListener {

		@RabbitListener(queues = "orders")
		@RetryableListener(delays = "-5s")
		void onOrder(String order) {
		}

	}

	static class TooMuchJitterListener {

		@RabbitListener(queues = "orders")
		@RetryableListener(jitter = 1.5)
		void onOrder(String order) {
		}

	}

	static class ExactPaymentListener {

		@RabbitListener(id = "payments", queues = "payments")
		@RetryableListener(policy = "payments", jitter = 0)
		void onPayment(String payment) {
		}

	}

	static class NegativeMaxRetriesListener {

		@RabbitListener(queues = "orders")
		@RetryableListener(maxRetries = -2)
		void onOrder(String order) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class TransactedListener {

		@Bean
		static SimpleRabbitListenerContainerFactory transactedFactory(ConnectionFactory connectionFactory) {
			SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
			factory.setConnectionFactory(connectionFactory);
			factory.setChannelTransacted(true);
			factory.setAutoStartup(false);
			return factory;
		}

		@RabbitListener(queues = "orders", containerFactory = "transactedFactory")
		@RetryableListener
		void onOrder(String order) {
		}

	}

	static class ManualAckListener {

		@RabbitListener(queues = "orders", ackMode = "MANUAL")
		@RetryableListener
		void onOrder(String order) {
		}

	}

	static class NoAckListener {

		@RabbitListener(queues = "orders", ackMode = "NONE")
		@RetryableListener
		void onOrder(String order) {
		}

	}

	static class BatchListener {

		@RabbitListener(id = "batch", queues = "orders", batch = "true")
		@RetryableListener
		void onOrders(List<String> orders) {
		}

	}

	static class ConsumerBatchListener {

		@RabbitListener(id = "consumer-batch", queues = "orders")
		@RetryableListener
		void onOrders(List<String> orders) {
		}

	}

	static class AsyncListener {

		@RabbitListener(id = "async", queues = "orders")
		@RetryableListener
		CompletableFuture<Void> onOrder(String order) {
			return CompletableFuture.completedFuture(null);
		}

	}

	static class MonoListener {

		@RabbitListener(id = "mono", queues = "orders")
		@RetryableListener
		Mono<Void> onOrder(String order) {
			return Mono.empty();
		}

	}

	static class ValueReturningBatchListener {

		@RabbitListener(queues = "orders", batch = "true")
		@RetryableListener
		String onOrders(List<String> orders) {
			return "done";
		}

	}

	static class CompletionStageListener {

		@RabbitListener(queues = "orders")
		@RetryableListener
		CompletionStage<Void> onOrder(String order) {
			return CompletableFuture.completedFuture(null);
		}

	}

	static class FluxListener {

		@RabbitListener(queues = "orders")
		@RetryableListener
		Flux<String> onOrder(String order) {
			return Flux.just(order);
		}

	}

	static class AsyncReplyingListener {

		@RabbitListener(queues = "orders")
		@RetryableListener
		@SendTo("replies")
		CompletableFuture<String> onOrder(String order) {
			return CompletableFuture.completedFuture(order);
		}

	}

	static class NotARabbitListener {

		@RetryableListener
		void onOrder(String order) {
		}

	}

	static class FinalFactoryListener {

		@RabbitListener(queues = "orders", containerFactory = "finalFactory")
		@RetryableListener
		void onOrder(String order) {
		}

	}

}
