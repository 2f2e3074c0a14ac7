package io.github.tieredretry.benchmarks.app;

import java.time.Duration;
import java.util.List;

import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import io.github.tieredretry.event.MessageParkedEvent;
import io.github.tieredretry.event.RetryScheduledEvent;

import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.AbstractConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbitmq.client.AmqpConnectionFactory;
import org.springframework.amqp.rabbitmq.client.SingleAmqpConnectionFactory;
import org.springframework.amqp.rabbitmq.client.config.RabbitAmqpListenerContainerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.amqp.autoconfigure.RabbitConnectionDetails;
import org.springframework.boot.amqp.autoconfigure.SimpleRabbitListenerContainerFactoryConfigurer;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;

/**
 * The application under measurement. The harness starts several of them side by side,
 * with the same listener container settings, and chooses per application:
 * <ul>
 * <li>{@code benchmarks.listeners}: {@code plain} ({@code @RabbitListener} only),
 * {@code retryable} (with {@code @RetryableListener}), {@code outage} (the outage
 * benchmark's two {@code @RetryableListener}s, with a circuit breaker and without),
 * {@code jitter} (the jitter benchmark's two, with jitter and without) or
 * {@code broker-backend} (that benchmark's listeners, each on the tiers and on the broker
 * backend, and its delay-accuracy listener on the RabbitMQ AMQP 1.0 client too, on quorum
 * work queues the application declares) or {@code amqp-listener} (the AMQP 1.0 listener
 * benchmark's listener on the RabbitMQ AMQP 1.0 client, plain and with
 * {@code @RetryableListener});</li>
 * <li>{@code benchmarks.amqp-client}: the RabbitMQ AMQP 1.0 client and its container
 * factory;</li>
 * <li>Spring Boot's {@code spring.rabbitmq.listener.simple.retry.*}: Spring AMQP's
 * blocking retry;</li>
 * <li>{@code benchmarks.recoverer.enabled}: Spring AMQP's
 * {@code RepublishMessageRecovererWithConfirms} as the recoverer of that retry.</li>
 * </ul>
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
public class BenchmarkApplication {

	@Bean
	Workloads workloads(@Value("${benchmarks.listener-work:0ms}") Duration listenerWork) {
		return new Workloads(listenerWork);
	}

	/**
	 * The batch listener's container factory: Spring Boot's simple container settings,
	 * with consumer-side batches, for the plain and the retryable batch listener alike.
	 * @param configurer the settings Spring Boot gives simple containers
	 * @param connectionFactory the connection factory
	 * @param batchSize how many messages a batch holds at most
	 * @return the factory
	 */
	@Bean
	SimpleRabbitListenerContainerFactory batchFactory(SimpleRabbitListenerContainerFactoryConfigurer configurer,
			ConnectionFactory connectionFactory, @Value("${benchmarks.batch-size:50}") int batchSize) {
		SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
		configurer.configure(factory, connectionFactory);
		factory.setConsumerBatchEnabled(true);
		factory.setBatchSize(batchSize);
		// A batch that cannot fill (a backlog's end, retries trickling back) goes to the
		// listener after 50 ms without a message, not Spring AMQP's 1 s, as an
		// application that batches would set it.
		factory.setReceiveTimeout(50L);
		return factory;
	}

	@Bean
	@ConditionalOnProperty(name = "benchmarks.listeners", havingValue = "plain")
	BenchmarkListeners.Plain plainListeners(Workloads workloads) {
		return new BenchmarkListeners.Plain(workloads);
	}

	@Bean
	@ConditionalOnProperty(name = "benchmarks.listeners", havingValue = "retryable")
	BenchmarkListeners.Retryable retryableListeners(Workloads workloads) {
		return new BenchmarkListeners.Retryable(workloads);
	}

	@Bean
	@ConditionalOnProperty(name = "benchmarks.listeners", havingValue = "outage")
	BenchmarkListeners.Outage outageListeners(Workloads workloads) {
		return new BenchmarkListeners.Outage(workloads);
	}

	@Bean
	@ConditionalOnProperty(name = "benchmarks.listeners", havingValue = "jitter")
	BenchmarkListeners.Jitter jitterListeners(Workloads workloads) {
		return new BenchmarkListeners.Jitter(workloads);
	}

	@Bean
	@ConditionalOnProperty(name = "benchmarks.listeners", havingValue = "broker-backend")
	BenchmarkListeners.BrokerBackend brokerBackendListeners(Workloads workloads) {
		return new BenchmarkListeners.BrokerBackend(workloads);
	}

	/**
	 * The broker-backend benchmark's work queues: quorum queues the application declares,
	 * so that the starter sees their arguments and adds the delayed-retry ones to those
	 * of listeners on the broker backend ({@code retry.broker.declare-queue-arguments}).
	 * @param queues the queues
	 * @return their declarations
	 */
	@Bean
	@ConditionalOnProperty(name = "benchmarks.listeners", havingValue = "broker-backend")
	Declarables brokerBackendWorkQueues(@Value("${benchmarks.broker-backend.queues}") List<String> queues) {
		return new Declarables(queues.stream().map((queue) -> QueueBuilder.durable(queue).quorum().build()).toList());
	}

	@Bean
	@ConditionalOnBooleanProperty("retry.enabled")
	RetryEventCounter retryEventCounter(Workloads workloads) {
		return new RetryEventCounter(workloads);
	}

	@Bean
	@ConditionalOnBooleanProperty("benchmarks.recoverer.enabled")
	CountingRepublishRecoverer republishMessageRecovererWithConfirms(ConnectionFactory connectionFactory,
			Workloads workloads, @Value("${benchmarks.recoverer.routing-key}") String routingKey,
			@Value("${benchmarks.recoverer.tier}") String tier) {
		return CountingRepublishRecoverer.create((AbstractConnectionFactory) connectionFactory, routingKey, tier,
				workloads);
	}

	/**
	 * The RabbitMQ AMQP 1.0 client of the applications that consume with it: what an
	 * application of that client declares itself (Spring Boot auto-configures none of
	 * it), from Boot's connection details, and the listeners on it. Its containers get
	 * the other containers' prefetch as initial credits; one consumer, like their
	 * concurrency 1.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBooleanProperty("benchmarks.amqp-client")
	static class AmqpClientConfiguration {

		@Bean(destroyMethod = "close")
		Environment amqpEnvironment(RabbitConnectionDetails details) {
			RabbitConnectionDetails.Address address = details.getFirstAddress();
			AmqpEnvironmentBuilder builder = new AmqpEnvironmentBuilder();
			builder.connectionSettings()
				.host(address.host())
				.port(address.port())
				.username(details.getUsername())
				.password(details.getPassword());
			if (details.getVirtualHost() != null) {
				builder.connectionSettings().virtualHost(details.getVirtualHost());
			}
			return builder.build();
		}

		@Bean
		SingleAmqpConnectionFactory amqpConnectionFactory(Environment environment) {
			return new SingleAmqpConnectionFactory(environment);
		}

		@Bean(BenchmarkListeners.AMQP_CONTAINER_FACTORY)
		RabbitAmqpListenerContainerFactory amqpContainerFactory(AmqpConnectionFactory connectionFactory,
				@Value("${spring.rabbitmq.listener.simple.prefetch}") int prefetch) {
			RabbitAmqpListenerContainerFactory factory = new RabbitAmqpListenerContainerFactory(connectionFactory);
			factory.setContainerCustomizer((container) -> container.setInitialCredits(prefetch));
			return factory;
		}

		@Bean
		@ConditionalOnProperty(name = "benchmarks.listeners", havingValue = "broker-backend")
		BenchmarkListeners.AmqpClient amqpClientListener(Workloads workloads,
				@Value("${benchmarks.queue." + BenchmarkListeners.BACKEND_ACCURACY_AMQP + "}") String queue) {
			return new BenchmarkListeners.AmqpClient(workloads, queue);
		}

		@Bean
		@ConditionalOnProperty(name = "benchmarks.listeners", havingValue = "amqp-listener")
		BenchmarkListeners.AmqpListeners amqpListeners(Workloads workloads,
				@Value("${benchmarks.queue." + BenchmarkListeners.AMQP_PLAIN + "}") String plainQueue,
				@Value("${benchmarks.queue." + BenchmarkListeners.AMQP_RETRYABLE + "}") String retryableQueue) {
			return new BenchmarkListeners.AmqpListeners(workloads, plainQueue, retryableQueue);
		}

	}

	/**
	 * Counts the forwards of tiered retries and the messages parked, which the starter
	 * announces once they are confirmed.
	 */
	static final class RetryEventCounter {

		private final Workloads workloads;

		RetryEventCounter(Workloads workloads) {
			this.workloads = workloads;
		}

		@EventListener
		void onRetryScheduled(RetryScheduledEvent event) {
			this.workloads.forQueue(event.queue())
				.scheduled(event.messageId(), event.tier(), event.delay(), event.due().toEpochMilli());
		}

		@EventListener
		void onMessageParked(MessageParkedEvent event) {
			this.workloads.forQueue(event.queue()).parked(event.messageId());
		}

	}

}
