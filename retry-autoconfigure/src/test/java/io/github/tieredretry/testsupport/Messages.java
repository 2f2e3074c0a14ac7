package io.github.tieredretry.testsupport;

import java.nio.charset.StandardCharsets;
import java.util.UUID;

import com.rabbitmq.client.AMQP;

/**
 * Builds test messages whose body is a {@link Script}.
 */
public final class Messages {

	private Messages() {
	}

	/**
	 * Publish a scripted text message.
	 * @param broker the client
	 * @param exchange the exchange
	 * @param routingKey the routing key
	 * @param script the script
	 * @return the message id
	 */
	public static String publish(BrokerClient broker, String exchange, String routingKey, String script) {
		return publish(broker, exchange, routingKey, script, null);
	}

	/**
	 * Publish a scripted text message with a per-message TTL.
	 * @param broker the client
	 * @param exchange the exchange
	 * @param routingKey the routing key
	 * @param script the script
	 * @param expiration the per-message TTL in milliseconds, or {@code null}
	 * @return the message id
	 */
	public static String publish(BrokerClient broker, String exchange, String routingKey, String script,
			String expiration) {
		String id = script.replace(':', '-') + "-" + UUID.randomUUID();
		AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().messageId(id)
			.contentType("text/plain")
			.deliveryMode(2)
			.expiration(expiration)
			.build();
		broker.publish(exchange, routingKey, properties, script.getBytes(StandardCharsets.UTF_8));
		return id;
	}

}
