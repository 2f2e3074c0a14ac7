package io.github.tieredretry.reliability.conditions;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;

import static org.awaitility.Awaitility.await;

/**
 * A plain AMQP 0-9-1 consumer that records when each delivery arrived, for the tests that
 * measure how long RabbitMQ 4.3's delayed retry holds a message.
 */
final class Arrivals extends DefaultConsumer {

	private final List<Arrival> arrivals = new CopyOnWriteArrayList<>();

	Arrivals(Channel channel) {
		super(channel);
	}

	@Override
	public void handleDelivery(String consumerTag, Envelope envelope, AMQP.BasicProperties properties, byte[] body) {
		this.arrivals.add(new Arrival(envelope.getDeliveryTag(), System.currentTimeMillis(), System.nanoTime()));
	}

	/**
	 * The n-th delivery (1 for the first), waiting for it.
	 * @param number which delivery
	 * @param timeout how long to wait for it
	 * @return the delivery
	 */
	Arrival arrival(int number, Duration timeout) {
		await().atMost(timeout).pollInterval(Duration.ofMillis(10)).until(() -> this.arrivals.size() >= number);
		return this.arrivals.get(number - 1);
	}

	List<Arrival> arrivals() {
		return this.arrivals;
	}

	/**
	 * One delivery.
	 *
	 * @param deliveryTag its delivery tag
	 * @param epochMillis when it arrived, in epoch milliseconds
	 * @param nanos when it arrived ({@link System#nanoTime()})
	 */
	record Arrival(long deliveryTag, long epochMillis, long nanos) {

		Duration since(long nanoTime) {
			return Duration.ofNanos(this.nanos - nanoTime);
		}

	}

}
