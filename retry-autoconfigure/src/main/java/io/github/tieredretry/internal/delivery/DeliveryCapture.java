package io.github.tieredretry.internal.delivery;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Envelope;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.headers.RetryHeaderValues;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessagePostProcessor;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.support.DefaultMessagePropertiesConverter;
import org.springframework.amqp.rabbit.support.MessagePropertiesConverter;
import org.springframework.core.Ordered;
import org.springframework.core.PriorityOrdered;

/**
 * Keeps what the broker delivered, so that a forwarded message is byte-for-byte the
 * received one.
 * <p>
 * Spring AMQP's property conversion is lossy for republishing (an absent content type
 * becomes {@code application/octet-stream}, an absent priority becomes 0, {@code user-id}
 * is dropped), and after-receive post-processors may rewrite the body (decompression).
 * The capturing converter and a first-in-line post-processor record the raw AMQP
 * properties and the original body on the consumer thread, which then invokes the
 * listener for that very message, or for a batch of them (a consumer-side batch is
 * converted message by message before the listener gets the list); each record is matched
 * to its message by the identity of its {@link MessageProperties}.
 */
public final class DeliveryCapture {

	private final ThreadLocal<Map<MessageProperties, Received>> current = ThreadLocal.withInitial(IdentityHashMap::new);

	private final MessagePropertiesConverter converter = new CapturingConverter();

	private final MessagePostProcessor bodyCapture = new BodyCapture();

	/**
	 * What the broker delivered.
	 *
	 * @param properties the converted properties handed to the listener (matched by
	 * identity)
	 * @param raw the raw AMQP properties
	 * @param body the body before any after-receive post-processing, or {@code null} if
	 * not captured
	 */
	record Received(MessageProperties properties, AMQP.BasicProperties raw, byte @Nullable [] body) {
	}

	public MessagePropertiesConverter converter() {
		return this.converter;
	}

	public MessagePostProcessor bodyCapture() {
		return this.bodyCapture;
	}

	/**
	 * The delivery behind a message, if it was captured on this thread; clears the
	 * capture.
	 * @param message the message the listener received
	 * @return what was delivered, or {@code null} (properties replaced by a
	 * post-processor): the caller then falls back to the converted message
	 */
	@Nullable Received take(Message message) {
		return take(List.of(message)).get(0);
	}

	/**
	 * The deliveries behind the messages of a batch, if they were captured on this
	 * thread; clears the capture.
	 * @param messages the messages the listener received
	 * @return what was delivered, per message, {@code null} where nothing was captured
	 */
	List<@Nullable Received> take(List<Message> messages) {
		Map<MessageProperties, Received> captured = this.current.get();
		List<@Nullable Received> received = new ArrayList<>(messages.size());
		for (Message message : messages) {
			received.add(captured.remove(message.getMessageProperties()));
		}
		captured.clear();
		return received;
	}

	private final class CapturingConverter extends DefaultMessagePropertiesConverter {

		@Override
		public MessageProperties toMessageProperties(AMQP.BasicProperties source, @Nullable Envelope envelope,
				String charset) {
			MessageProperties properties = super.toMessageProperties(source, envelope, charset);
			sanitizeRetryCount(source.getHeaders(), properties);
			DeliveryCapture.this.current.get().put(properties, new Received(properties, source, null));
			return properties;
		}

		// A {@code retry-count} header that is present but not a non-negative number
		// (from another producer, say) counts as 0, rather than Spring AMQP's fallback to
		// {@code x-death}.
		private void sanitizeRetryCount(@Nullable Map<String, Object> headers, MessageProperties properties) {
			Object raw = (headers != null) ? headers.get(RetryHeaders.COUNT) : null;
			if (raw != null) {
				properties.setRetryCount(RetryHeaderValues.count(raw));
			}
			else if (properties.getRetryCount() < 0) {
				properties.setRetryCount(0);
			}
		}

	}

	private final class BodyCapture implements MessagePostProcessor, PriorityOrdered {

		@Override
		public Message postProcessMessage(Message message) {
			Map<MessageProperties, Received> captured = DeliveryCapture.this.current.get();
			Received received = captured.get(message.getMessageProperties());
			if (received != null && received.body() == null) {
				captured.put(received.properties(),
						new Received(received.properties(), received.raw(), message.getBody()));
			}
			return message;
		}

		@Override
		public int getOrder() {
			return Ordered.HIGHEST_PRECEDENCE;
		}

	}

}
