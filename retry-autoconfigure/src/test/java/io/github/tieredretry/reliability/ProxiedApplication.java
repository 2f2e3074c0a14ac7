package io.github.tieredretry.reliability;

import java.util.LinkedHashMap;
import java.util.Map;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.autoconfigure.TieredRetryAutoConfiguration;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.OutboundFrames;
import io.github.tieredretry.testsupport.ScriptedListener;
import io.github.tieredretry.testsupport.TestApplications;
import io.github.tieredretry.testsupport.TestBroker;
import org.jspecify.annotations.Nullable;

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
		String[] credentials = credentials();
		all.put("spring.rabbitmq.host", "127.0.0.1");
		all.put("spring.rabbitmq.port", consumerProxy.port());
		all.put("spring.rabbitmq.username", credentials[0]);
		all.put("spring.rabbitmq.password", credentials[1]);
		all.put("spring.rabbitmq.connection-timeout", "2s");
		all.put("spring.main.web-application-type", "none");
		if (publisherProxy != null) {
			all.put("test.publisher-port", publisherProxy.port());
		}
		all.putAll(properties);
		return new ProxiedApplication(TestApplications.run(App.class, all));
	}

	private static String[] credentials() {
		String username = "guest";
		String password = "guest";
		for (String pair : TestBroker.get().springProperties()) {
			if (pair.startsWith("spring.rabbitmq.username=")) {
				username = pair.substring(pair.indexOf('=') + 1);
			}
			else if (pair.startsWith("spring.rabbitmq.password=")) {
				password = pair.substring(pair.indexOf('=') + 1);
			}
		}
		return new String[] { username, password };
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

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		InvocationRecorder deliveries() {
			return new InvocationRecorder();
		}

		@Bean
		RetryEvents retryEvents() {
			return new RetryEvents();
		}

		@Bean
		OutboundFrames outboundFrames() {
			return new OutboundFrames();
		}

		@Bean
		ConnectionFactoryCustomizer recordOutboundFrames(OutboundFrames frames) {
			return (factory) -> factory.setTrafficListener(frames);
		}

		@Bean
		Queue workQueue(@Value("${test.work}") String name) {
			return new Queue(name);
		}

		@Bean
		@ConditionalOnProperty("test.limited")
		Queue limitedQueue(@Value("${test.limited}") String name) {
			// A quorum queue with a delivery limit, as RabbitMQ 4 gives every quorum
			// queue (20 there).
			return new Queue(name, true, false, false, Map.of("x-queue-type", "quorum", "x-delivery-limit", 2));
		}

		@Bean
		@ConditionalOnProperty("test.limited")
		Queue limitedWithDeadLettersQueue(@Value("${test.limited-with-dead-letters}") String name,
				@Value("${test.dead-letters}") String deadLetters) {
			return new Queue(name, true, false, false, Map.of("x-queue-type", "quorum", "x-delivery-limit", 2,
					"x-dead-letter-exchange", "", "x-dead-letter-routing-key", deadLetters));
		}

		@Bean
		@ConditionalOnProperty("test.limited")
		Queue deadLettersQueue(@Value("${test.dead-letters}") String name) {
			return new Queue(name);
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

		@Bean
		Listeners listeners(InvocationRecorder deliveries) {
			return new Listeners(deliveries);
		}

	}

	static class Listeners extends ScriptedListener {

		Listeners(InvocationRecorder deliveries) {
			super(deliveries);
		}

		@RabbitListener(queues = "${test.work}", concurrency = "${test.concurrency:1}")
		@RetryableListener(noRetryOn = IllegalArgumentException.class)
		void onWork(Message message) {
			run(message);
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
