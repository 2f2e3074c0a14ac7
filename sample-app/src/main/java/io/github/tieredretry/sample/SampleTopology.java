package io.github.tieredretry.sample;

import org.springframework.amqp.core.Queue;
import org.springframework.amqp.support.converter.JacksonJsonMessageConverter;
import org.springframework.amqp.support.converter.MessageConverter;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The application's own queue and message format; the retry tiers and parking lot are
 * declared by the starter.
 */
@Configuration(proxyBeanMethods = false)
public class SampleTopology {

	/** The property naming the orders queue (default {@code orders}). */
	public static final String ORDERS_QUEUE_PROPERTY = "sample.orders-queue";

	@Bean
	Queue ordersQueue(@Value("${" + ORDERS_QUEUE_PROPERTY + ":orders}") String name) {
		return new Queue(name);
	}

	@Bean
	MessageConverter jsonMessageConverter() {
		return new JacksonJsonMessageConverter();
	}

}
