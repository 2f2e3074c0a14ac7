package io.github.tieredretry.internal.settlement;

import org.springframework.amqp.core.Message;

/**
 * How a delivery is named in log lines.
 */
public final class Deliveries {

	private Deliveries() {
	}

	static String describe(Message message) {
		String id = message.getMessageProperties().getMessageId();
		return (id != null) ? "'" + id + "'"
				: "(no message-id, delivery tag " + message.getMessageProperties().getDeliveryTag() + ")";
	}

}
