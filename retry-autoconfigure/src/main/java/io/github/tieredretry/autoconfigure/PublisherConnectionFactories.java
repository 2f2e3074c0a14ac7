package io.github.tieredretry.autoconfigure;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.rabbit.connection.AbstractConnectionFactory;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.amqp.autoconfigure.CachingConnectionFactoryConfigurer;

/**
 * Creates the connection factory that forwards failed messages: same broker, credentials and TLS as the
 * application's, but a connection of its own with publisher confirms, whatever the application set for
 * {@code spring.rabbitmq.publisher-confirm-type}.
 */
final class PublisherConnectionFactories {

	private static final Log logger = LogFactory.getLog(PublisherConnectionFactories.class);

	/** The connection name shown by the broker (management UI, {@code rabbitmqctl list_connections}). */
	static final String CONNECTION_NAME = "tiered-retry-publisher";

	private PublisherConnectionFactories() {
	}

	static CachingConnectionFactory create(ConnectionFactory applicationFactory,
			@Nullable CachingConnectionFactoryConfigurer bootConfigurer, BeanFactory beanFactory) {
		if (!(applicationFactory instanceof AbstractConnectionFactory application)) {
			throw new IllegalStateException("Tiered retries need a connection factory of their own to forward "
					+ "failed messages, and cannot derive it from " + applicationFactory.getClass().getName()
					+ ". Define a CachingConnectionFactory bean named '"
					+ TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY + "' with publisher confirm type SIMPLE, "
					+ "connected to the same broker, declared with @Bean(defaultCandidate = false) so that it does not "
					+ "replace the application's own connection factory.");
		}
		// Same underlying client factory: host, port, virtual host, credentials, TLS and customizations.
		CachingConnectionFactory publisher = new CachingConnectionFactory(application.getRabbitConnectionFactory());
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
		publisher.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.SIMPLE);
		publisher.setPublisherReturns(false);
		publisher.setConnectionNameStrategy((factory) -> CONNECTION_NAME);
		publisher.setBeanName(TieredRetryAutoConfiguration.PUBLISHER_CONNECTION_FACTORY);
		return publisher;
	}

	private static boolean isBootsOwn(ConnectionFactory applicationFactory, BeanFactory beanFactory) {
		return beanFactory.containsBean("rabbitConnectionFactory")
				&& beanFactory.getBean("rabbitConnectionFactory") == applicationFactory;
	}

}
