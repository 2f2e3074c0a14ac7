package io.github.tieredretry.listener;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;

import com.rabbitmq.client.Channel;
import io.github.tieredretry.broker.RealChannels;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.amqp.core.Message;

/**
 * Acks or requeues one delivery on the consumer's channel, once. Called on the consumer
 * thread or, once a forward is settled, on the ack thread: a single {@code basic.ack}
 * frame is safe to send from another thread (Spring AMQP acks asynchronous replies the
 * same way).
 * <p>
 * It holds the channel that delivered the message, not the container's cached-channel
 * proxy: once its channel has died, that proxy opens a new one on the next call, and a
 * late ack would then settle whichever message carries the same delivery tag there. On
 * the dead channel the ack fails instead, and the broker has already put the message back
 * in its queue.
 * <p>
 * A requeue is a {@code basic.nack} with requeue, never a {@code basic.reject}: on
 * RabbitMQ 4.3 a reject counts towards a quorum queue's delivery limit and a nack does
 * not, and a message requeued here is not at fault (its forward failed, the broker
 * blocked publishing, the application stops).
 */
final class Acknowledgement {

	private static final Log logger = LogFactory.getLog(Acknowledgement.class);

	private final Channel channel;

	private final Message message;

	private final AtomicBoolean done = new AtomicBoolean();

	Acknowledgement(Channel channel, Message message) {
		this.channel = RealChannels.target(channel);
		this.message = message;
	}

	/**
	 * The channel that delivered the message.
	 * @return the real channel
	 */
	Channel channel() {
		return this.channel;
	}

	void ack() {
		if (this.done.compareAndSet(false, true)) {
			try {
				this.channel.basicAck(deliveryTag(), false);
			}
			catch (IOException | RuntimeException ex) {
				logger.warn("Could not ack message " + Deliveries.describe(this.message) + " (" + ex.getMessage()
						+ "); the broker will deliver it again");
			}
		}
	}

	void requeue() {
		if (this.done.compareAndSet(false, true)) {
			try {
				this.channel.basicNack(deliveryTag(), false, true);
			}
			catch (IOException | RuntimeException ex) {
				logger.warn("Could not requeue message " + Deliveries.describe(this.message) + " (" + ex.getMessage()
						+ "); the broker will deliver it again");
			}
		}
	}

	private long deliveryTag() {
		return this.message.getMessageProperties().getDeliveryTag();
	}

}
