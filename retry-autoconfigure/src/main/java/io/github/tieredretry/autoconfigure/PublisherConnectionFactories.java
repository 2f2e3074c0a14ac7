package io.github.tieredretry.autoconfigure;

import java.time.Duration;
import java.util.List;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.rabbit.connection.AbstractConnectionFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.amqp.autoconfigure.CachingConnectionFactoryConfigurer;

/**
 * Creates the connection factory that forwards failed messages: same broker, credentials
 * and TLS as the application's, but a connection of its own with publisher confirms,
 * whatever the application set for {@code spring.rabbitmq.publisher-confirm-type}.
 */
final class PublisherConnectionFactories {

	private static final Log logger = LogFactory.getLog(PublisherConnectionFactories.class);

	/**
	 * The connection name shown by the broker (management UI,
	 * {@code rabbitmqctl list_connections}).
	 */
	static final String CONNECTION_NAME = "tiered-retry-publisher";

	/**
	 * The shortest wait for the reply to a channel open or close on the publisher
	 * connection.
	 */
	static final Duration MIN_CHANNEL_RPC_TIMEOUT = Duration.ofSeconds(10);

	private PublisherConnectionFactories() {
	}

	static CachingConnectionFactory create(ConnectionFactory applicationFactory,
			@Nullable CachingConnectionFactoryConfigurer bootConfigurer, BeanFactory beanFactory,
			Duration confirmTimeout, List<RetryPublisherConnectionFactoryCustomizer> customizers) {
		if (!(applicationFactory instanceof AbstractConnectionFactory application)) {
			throw new IllegalStateException("Tiered retries need a connection factory of their own to forward "
					+ "failed messages, and cannot derive it from " + applicationFactory.getClass().getName()
					+ ". Define a CachingConnectionFactory bean named '"
					+ TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY
					+ "' with publisher confirm type SIMPLE, "
					+ "connected to the same broker, declared with @Bean(defaultCandidate = false) so that it does not "
					+ "replace the application's own connection factory.");
		}
		// A copy of the client factory: same host, port, virtual host, credentials, TLS
		// and customizations, but channel RPCs (open, close) that give up after a short
		// while. During a resource alarm the broker stops reading the publisher
		// connection, and the default (10 minutes) would hold the publisher thread as
		// long.
		com.rabbitmq.client.ConnectionFactory client = application.getRabbitConnectionFactory().clone();
		client.setChannelRpcTimeout((int) Math.min(Integer.MAX_VALUE,
				Math.max(MIN_CHANNEL_RPC_TIMEOUT.toMillis(), confirmTimeout.toMillis() * 2)));
		CachingConnectionFactory publisher = new CachingConnectionFactory(client);
		if (bootConfigurer != null && isBootsOwn(applicationFactory, beanFactory)) {
			// Spring Boot's settings on top: address list, channel cache, timeouts.
			bootConfigurer.configure(publisher);
		}
		else {
			logger.info("Forwarding failed messages through " + application.getHost() + ":" + application.getPort()
					+ " (the application's own connection factory); define a bean named '"
					+ TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY
					+ "' (with @Bean(defaultCandidate = false)) to choose otherwise");
		}
		// One long-lived connection: CONNECTION mode (copied from
		// spring.rabbitmq.cache.connection.mode) would open
		// a connection per forward.
		publisher.setCacheMode(CachingConnectionFactory.CacheMode.CHANNEL);
		publisher.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.SIMPLE);
		publisher.setPublisherReturns(false);
		publisher.setConnectionNameStrategy((factory) -> CONNECTION_NAME);
		publisher.setBeanName(TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY);
		customizers.forEach((customizer) -> customizer.customize(publisher));
		return publisher;
	}

	private static boolean isBootsOwn(ConnectionFactory applicationFactory, BeanFactory beanFactory) {
		return beanFactory.containsBean("rabbitConnectionFactory")
				&& beanFactory.getBean("rabbitConnectionFactory") == applicationFactory;
	}

}
