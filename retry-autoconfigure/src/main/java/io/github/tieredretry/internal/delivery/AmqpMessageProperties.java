package io.github.tieredretry.internal.delivery;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import com.rabbitmq.client.AMQP;
import org.jspecify.annotations.Nullable;

/**
 * The AMQP 0-9-1 properties of a message received over AMQP 1.0, for a forward through
 * the starter's AMQP 0-9-1 publisher: the fields RabbitMQ maps between the two protocols,
 * and the application properties as headers. Nothing is invented (no timestamp where the
 * message had none).
 */
public final class AmqpMessageProperties {

	private static final int PERSISTENT = 2;

	private static final int TRANSIENT = 1;

	private AmqpMessageProperties() {
	}

	static AMQP.BasicProperties of(com.rabbitmq.client.amqp.Message message) {
		Map<String, Object> headers = new LinkedHashMap<>();
		message.forEachProperty((name, value) -> headers.put(name, headerValue(value)));
		AMQP.BasicProperties.Builder builder = new AMQP.BasicProperties.Builder().headers(headers)
			.messageId(text(message.messageId()))
			.correlationId(text(message.correlationId()))
			.contentType(message.contentType())
			.contentEncoding(message.contentEncoding())
			.replyTo(message.replyTo())
			.type(message.subject())
			.deliveryMode(message.durable() ? PERSISTENT : TRANSIENT)
			.priority((int) message.priority());
		byte[] userId = message.userId();
		if (userId != null) {
			builder.userId(new String(userId, StandardCharsets.UTF_8));
		}
		if (message.creationTime() > 0) {
			builder.timestamp(new Date(message.creationTime()));
		}
		Duration ttl = message.ttl();
		if (ttl != null && !ttl.isZero()) {
			builder.expiration(Long.toString(ttl.toMillis()));
		}
		return builder.build();
	}

	/**
	 * Only the named application properties, with the values {@link #of} gives them as
	 * headers: what a delivery's retry state needs, without converting the rest.
	 * @param message the received message
	 * @param names the application properties to read
	 * @return those of them the message has
	 */
	static Map<String, Object> headers(com.rabbitmq.client.amqp.Message message, Set<String> names) {
		Map<String, Object> headers = new LinkedHashMap<>();
		message.forEachProperty((name, value) -> {
			if (names.contains(name)) {
				headers.put(name, headerValue(value));
			}
		});
		return headers;
	}

	private static @Nullable String text(@Nullable Object value) {
		return (value != null) ? value.toString() : null;
	}

	// AMQP 0-9-1 headers take fewer types than AMQP 1.0 application properties:
	// unsigned numbers become longs, other types (UUIDs, symbols, chars) their text.
	private static @Nullable Object headerValue(@Nullable Object value) {
		if (value == null || value instanceof String || value instanceof Boolean || value instanceof Integer
				|| value instanceof Long || value instanceof Short || value instanceof Byte || value instanceof Double
				|| value instanceof Float || value instanceof BigDecimal || value instanceof Date
				|| value instanceof byte[]) {
			return value;
		}
		if (value instanceof Number number) {
			return number.longValue();
		}
		return value.toString();
	}

}
