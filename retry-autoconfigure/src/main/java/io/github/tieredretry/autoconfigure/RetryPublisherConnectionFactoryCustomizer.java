package io.github.tieredretry.autoconfigure;

import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;

/**
 * Customizes the connection factory that forwards failed messages to the tiers and the
 * parking lot (bean {@value TieredRetryAutoConfiguration#PUBLISHER_CONNECTION_FACTORY}),
 * e.g. its channel cache size, its connection name or its address list.
 * <p>
 * Customizers run in {@link org.springframework.core.annotation.Order order}, after the
 * starter's own settings. Two of those are part of the delivery guarantee and are checked
 * afterwards: the publisher confirm type must stay {@code SIMPLE} (a message is acked
 * only after its forward is confirmed) and the cache mode {@code CHANNEL} (one long-lived
 * connection); the application fails to start if a customizer changes them.
 */
@FunctionalInterface
public interface RetryPublisherConnectionFactoryCustomizer {

	/**
	 * Customize the publisher connection factory.
	 * @param connectionFactory the factory, configured like the application's own but
	 * with confirms
	 */
	void customize(CachingConnectionFactory connectionFactory);

}
