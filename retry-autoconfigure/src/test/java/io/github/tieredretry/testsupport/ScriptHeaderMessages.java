package io.github.tieredretry.testsupport;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;

import com.rabbitmq.client.AMQP;
import org.jspecify.annotations.Nullable;

/**
 * Publishes persistent text messages whose {@link Script} is in header
 * {@value Script#HEADER}, with the body {@code payload} and a random message id: the
 * message most reliability tests send (unlike {@link Messages}, whose script is the
 * body).
 */
public final class ScriptHeaderMessages {

	/** The body of every message. */
	public static final String BODY = "payload";

	private ScriptHeaderMessages() {
	}

	/**
	 * Publish a scripted message to a queue.
	 * @param broker the client
	 * @param queue the queue (through the default exchange)
	 * @param script the script
	 * @return the message id
	 */
	public static String publish(BrokerClient broker, String queue, String script) {
		return publish(broker, queue, script, null);
	}

	/**
	 * Publish a scripted message with a per-message TTL to a queue.
	 * @param broker the client
	 * @param queue the queue (through the default exchange)
	 * @param script the script
	 * @param expiration the per-message TTL in milliseconds, or {@code null}
	 * @return the message id
	 */
	public static String publish(BrokerClient broker, String queue, String script, @Nullable String expiration) {
		String id = UUID.randomUUID().toString();
		publish(broker, queue, id, script, expiration);
		return id;
	}

	/**
	 * Publish a scripted message with a message id the test chose.
	 * @param broker the client
	 * @param queue the queue (through the default exchange)
	 * @param id the message id
	 * @param script the script
	 * @param expiration the per-message TTL in milliseconds, or {@code null}
	 */
	public static void publish(BrokerClient broker, String queue, String id, String script,
			@Nullable String expiration) {
		AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().messageId(id)
			.deliveryMode(2)
			.contentType("text/plain")
			.expiration(expiration)
			.headers(Map.of(Script.HEADER, script))
			.build();
		broker.publish("", queue, properties, BODY.getBytes(StandardCharsets.UTF_8));
	}

}
