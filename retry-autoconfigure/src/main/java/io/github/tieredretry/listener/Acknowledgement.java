package io.github.tieredretry.listener;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;

import com.rabbitmq.client.Channel;
import io.github.tieredretry.broker.RealChannels;
import io.github.tieredretry.headers.RetryHeaders;
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
 * not, and a message requeued here is not at fault (the broker blocked publishing, the
 * application stops).
 * <p>
 * On RabbitMQ 4.0 to 4.2 a quorum queue counts every return, nack included, and drops or
 * dead-letters a message past its delivery limit (20 by default). The broker says how
 * often it has counted a message: {@link #countedReturns()}. The starter gives a message
 * back to its queue of its own accord only while that count is zero
 * ({@link #mayRequeue()}), so it spends at most one of a message's lives; everywhere else
 * it holds the message or moves it through a tier, which gives the broker a new message
 * with a count of zero.
 */
final class Acknowledgement {

	private static final Log logger = LogFactory.getLog(Acknowledgement.class);

	private final Channel channel;

	private final Message message;

	private final AtomicBoolean done = new AtomicBoolean();

	private final long countedReturns;

	Acknowledgement(Channel channel, Message message) {
		this.channel = RealChannels.target(channel);
		this.message = message;
		this.countedReturns = countedReturns(message);
	}

	private static long countedReturns(Message message) {
		Object count = message.getMessageProperties().getHeaders().get(RetryHeaders.BROKER_DELIVERY_COUNT);
		return (count instanceof Number number) ? Math.max(0, number.longValue()) : 0;
	}

	/**
	 * How often the broker has counted the message as given back to its queue: header
	 * {@code x-delivery-count}, which quorum queues set (on RabbitMQ 4.0 to 4.2 for every
	 * return; on 4.3 for rejects, closed channels and lost connections, not for nacks).
	 * Zero for classic queues, which have no delivery limit.
	 * @return the count
	 */
	long countedReturns() {
		return this.countedReturns;
	}

	/**
	 * Whether the starter may give the message back to its queue of its own accord: only
	 * when the broker has never counted a return of it, so that the starter spends at
	 * most one of its lives (a quorum queue drops or dead-letters a message past its
	 * delivery limit, 20 by default from RabbitMQ 4.0).
	 * @return whether a requeue is allowed
	 */
	boolean mayRequeue() {
		return this.countedReturns == 0;
	}

	/**
	 * Whether the channel that delivered the message is still open: once it has closed,
	 * the broker has put the message back in its queue, and it must not be processed or
	 * forwarded from here any more (that would make a duplicate).
	 * @return whether it is open
	 */
	boolean isChannelOpen() {
		return this.channel.isOpen();
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

	/**
	 * Give the message back to its queue as a failed delivery ({@code basic.reject} with
	 * requeue), for a queue with delayed retry to deliver it again after its delay: the
	 * broker backend's retry. The broker counts it ({@code x-delivery-count}), which is
	 * the message's retry count there.
	 */
	void rejectForRetry() {
		if (this.done.compareAndSet(false, true)) {
			try {
				this.channel.basicReject(deliveryTag(), true);
			}
			catch (IOException | RuntimeException ex) {
				logger.warn("Could not give message " + Deliveries.describe(this.message) + " back to its queue for "
						+ "its retry (" + ex.getMessage() + "); the broker will deliver it again");
			}
		}
	}

	private long deliveryTag() {
		return this.message.getMessageProperties().getDeliveryTag();
	}

}
