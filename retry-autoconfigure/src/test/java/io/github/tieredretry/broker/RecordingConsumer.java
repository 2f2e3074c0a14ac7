package io.github.tieredretry.broker;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;

import static org.awaitility.Awaitility.await;

/**
 * A plain AMQP 0-9-1 consumer that records every delivery with the moment it arrived, so
 * that a test can measure how long the broker held a message that was given back to it.
 * Also records the broker's cancellations.
 */
final class RecordingConsumer extends DefaultConsumer {

	private static final Duration TIMEOUT = Duration.ofSeconds(15);

	/**
	 * Often enough that a test that acknowledges what arrived does so long before a delay
	 * of a few hundred milliseconds ends.
	 */
	private static final Duration POLL = Duration.ofMillis(10);

	private final List<Delivery> deliveries = new CopyOnWriteArrayList<>();

	private final Map<String, Long> cancelled = new ConcurrentHashMap<>();

	RecordingConsumer(Channel channel) {
		super(channel);
	}

	@Override
	public void handleDelivery(String consumerTag, Envelope envelope, AMQP.BasicProperties properties, byte[] body) {
		this.deliveries.add(new Delivery(new String(body, StandardCharsets.UTF_8), envelope.getDeliveryTag(),
				consumerTag, envelope.isRedeliver(),
				(properties.getHeaders() != null) ? Map.copyOf(properties.getHeaders()) : Map.of(), System.nanoTime()));
	}

	@Override
	public void handleCancel(String consumerTag) {
		this.cancelled.put(consumerTag, System.nanoTime());
	}

	/**
	 * The n-th delivery (1 for the first), waiting for it.
	 * @param number which delivery
	 * @return the delivery
	 */
	Delivery delivery(int number) {
		await().atMost(TIMEOUT).pollInterval(POLL).until(() -> this.deliveries.size() >= number);
		return this.deliveries.get(number - 1);
	}

	List<Delivery> deliveries() {
		return this.deliveries;
	}

	/**
	 * The consumers the broker cancelled, with when the cancellation arrived.
	 * @return consumer tag to {@link System#nanoTime()}
	 */
	Map<String, Long> cancelled() {
		return this.cancelled;
	}

	/**
	 * A message as the consumer received it.
	 *
	 * @param body its body
	 * @param deliveryTag its delivery tag
	 * @param consumerTag the consumer it was delivered to
	 * @param redelivered the redelivered flag
	 * @param headers its headers
	 * @param arrivedNanos when it arrived ({@link System#nanoTime()})
	 */
	record Delivery(String body, long deliveryTag, String consumerTag, boolean redelivered, Map<String, Object> headers,
			long arrivedNanos) {

		/**
		 * How long after a moment this delivery arrived.
		 * @param nanos the moment, from {@link System#nanoTime()}
		 * @return the time between
		 */
		Duration since(long nanos) {
			return Duration.ofNanos(this.arrivedNanos - nanos);
		}

		/**
		 * A count header ({@code x-delivery-count}, {@code x-acquired-count}).
		 * @param name the header
		 * @return its value, or {@code null} when the message does not have it
		 */
		Long count(String name) {
			Object value = this.headers.get(name);
			return (value != null) ? ((Number) value).longValue() : null;
		}

	}

}
