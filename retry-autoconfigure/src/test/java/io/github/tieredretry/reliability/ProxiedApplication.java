package io.github.tieredretry.reliability;

import java.util.LinkedHashMap;
import java.util.Map;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.autoconfigure.TieredRetryAutoConfiguration;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.OutboundFrames;
import io.github.tieredretry.testsupport.RetryEvents;
import io.github.tieredretry.testsupport.ScriptedListener;
import io.github.tieredretry.testsupport.TestApplications;
import io.github.tieredretry.testsupport.TestBroker;
import io.github.tieredretry.testsupport.TestQueues;
import io.github.tieredretry.testsupport.TopologyProperties;
import io.github.tieredretry.testsupport.WorkQueueApplication;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.amqp.autoconfigure.ConnectionFactoryCustomizer;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * A retryable application whose broker connections go through {@link TcpProxy proxies}
 * that a test breaks: the listener containers' connection through one, and optionally the
 * forwarding publisher's connection through another, so that forwards can fail while
 * consumers still receive. Started per test, because some tests need the broker gone
 * before the application starts.
 */
final class ProxiedApplication implements AutoCloseable {

	private final ConfigurableApplicationContext context;

	private ProxiedApplication(ConfigurableApplicationContext context) {
		this.context = context;
	}

	/**
	 * Start the application.
	 * @param consumerProxy the proxy of the application's own connection
	 * @param publisherProxy the proxy of the forwarding connection, or {@code null} for
	 * the same connection settings as the application (then through {@code consumerProxy}
	 * too)
	 * @param properties test and {@code retry.*} properties
	 * @return the running application
	 */
	static ProxiedApplication start(TcpProxy consumerProxy, @Nullable TcpProxy publisherProxy,
			Map<String, Object> properties) {
		Map<String, Object> all = new LinkedHashMap<>();
		all.put("spring.rabbitmq.host", "127.0.0.1");
		all.put("spring.rabbitmq.port", consumerProxy.port());
		all.put("spring.rabbitmq.username", TestBroker.get().username());
		all.put("spring.rabbitmq.password", TestBroker.get().password());
		all.put("spring.rabbitmq.connection-timeout", "2s");
		all.put("spring.main.web-application-type", "none");
		if (publisherProxy != null) {
			all.put("test.publisher-port", publisherProxy.port());
		}
		all.putAll(properties);
		return new ProxiedApplication(TestApplications.run(App.class, all));
	}

	/**
	 * The properties of the tests that break forwarding: two retries, each after the
	 * topology's short tier, and failed forwards tried again after short pauses (0.1 s
	 * doubling up to 0.5 s).
	 * @param topology the test's topology
	 * @param work the work queue
	 * @param confirmTimeout how long a forward waits for its confirm
	 * @return the properties, in a new map to add the test's own to
	 */
	static Map<String, Object> forwardingProperties(TestQueues.Topology topology, String work, String confirmTimeout) {
		Map<String, Object> properties = TopologyProperties.retrying(topology, work, 2);
		properties.put("retry.publish.confirm-timeout", confirmTimeout);
		properties.put("retry.publish.failure-initial-pause", "100ms");
		properties.put("retry.publish.failure-max-pause", "500ms");
		return properties;
	}

	InvocationRecorder deliveries() {
		return this.context.getBean(InvocationRecorder.class);
	}

	RetryEvents events() {
		return this.context.getBean(RetryEvents.class);
	}

	OutboundFrames frames() {
		return this.context.getBean(OutboundFrames.class);
	}

	boolean isRunning() {
		return this.context.isActive();
	}

	@Override
	public void close() {
		this.context.close();
	}

	/**
	 * The {@link WorkQueueApplication} with its frames recorded, quorum work queues with
	 * a delivery limit ({@code test.limited}) and a forwarding connection of its own
	 * ({@code test.publisher-port}).
	 */
	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App extends WorkQueueApplication {

		@Bean
		OutboundFrames outboundFrames() {
			return new OutboundFrames();
		}

		@Bean
		ConnectionFactoryCustomizer recordOutboundFrames(OutboundFrames frames) {
			return (factory) -> factory.setTrafficListener(frames);
		}

		/**
		 * Quorum queues with a delivery limit, as RabbitMQ 4 gives every quorum queue (20
		 * there), one of them dead-lettering to a queue of its own.
		 */
		@Bean
		@ConditionalOnProperty("test.limited")
		Declarables limitedQueues(@Value("${test.limited}") String limited,
				@Value("${test.limited-with-dead-letters}") String limitedWithDeadLetters,
				@Value("${test.dead-letters}") String deadLetters) {
			Map<String, Object> limit = Map.of("x-queue-type", "quorum", "x-delivery-limit", 2);
			Map<String, Object> limitWithDeadLetters = new LinkedHashMap<>(limit);
			limitWithDeadLetters.put("x-dead-letter-exchange", "");
			limitWithDeadLetters.put("x-dead-letter-routing-key", deadLetters);
			return new Declarables(new Queue(limited, true, false, false, limit),
					new Queue(limitedWithDeadLetters, true, false, false, limitWithDeadLetters),
					new Queue(deadLetters));
		}

		@Bean
		@ConditionalOnProperty("test.limited")
		LimitedListeners limitedListeners(InvocationRecorder deliveries) {
			return new LimitedListeners(deliveries);
		}

		/**
		 * Forwards through a proxy of their own, so that a test can break forwarding
		 * alone.
		 */
		@Bean(name = TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY, defaultCandidate = false)
		@ConditionalOnProperty("test.publisher-port")
		CachingConnectionFactory tieredRetryPublisherConnectionFactory(@Value("${test.publisher-port}") int port,
				@Value("${spring.rabbitmq.username}") String username,
				@Value("${spring.rabbitmq.password}") String password) {
			CachingConnectionFactory factory = new CachingConnectionFactory("127.0.0.1", port);
			factory.setUsername(username);
			factory.setPassword(password);
			factory.setConnectionTimeout(2000);
			factory.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.SIMPLE);
			return factory;
		}

	}

	/** Listeners of quorum work queues with a delivery limit. */
	static class LimitedListeners extends ScriptedListener {

		LimitedListeners(InvocationRecorder deliveries) {
			super(deliveries);
		}

		@RabbitListener(queues = "${test.limited}")
		@RetryableListener
		void onLimited(Message message) {
			run(message);
		}

		@RabbitListener(queues = "${test.limited-with-dead-letters}")
		@RetryableListener
		void onLimitedWithDeadLetters(Message message) {
			run(message);
		}

	}

}
