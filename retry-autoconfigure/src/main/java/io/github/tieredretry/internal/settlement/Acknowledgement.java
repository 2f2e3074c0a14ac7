package io.github.tieredretry.internal.settlement;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import com.rabbitmq.client.Channel;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.broker.RealChannels;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

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
public final class Acknowledgement implements Settlement {

	private static final Log logger = LogFactory.getLog(Acknowledgement.class);

	private final Channel channel;

	private final Message message;

	private final AtomicBoolean done = new AtomicBoolean();

	private final long countedReturns;

	private final @Nullable OutstandingDeliveries outstanding;

	public Acknowledgement(Channel channel, Message message) {
		this(channel, message, null);
	}

	/**
	 * Create the acknowledgement of a delivery.
	 * @param channel the channel that delivered it (a proxy is resolved to its target)
	 * @param message the message
	 * @param outstanding the channel's unsettled deliveries, for acks of several at once,
	 * or {@code null}
	 */
	public Acknowledgement(Channel channel, Message message, @Nullable OutstandingDeliveries outstanding) {
		this.channel = RealChannels.target(channel);
		this.message = message;
		this.countedReturns = countedReturns(message);
		this.outstanding = outstanding;
		if (outstanding != null) {
			outstanding.add(deliveryTag());
		}
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
	public long countedReturns() {
		return this.countedReturns;
	}

	/**
	 * Whether the starter may give the message back to its queue of its own accord: only
	 * when the broker has never counted a return of it, so that the starter spends at
	 * most one of its lives (a quorum queue drops or dead-letters a message past its
	 * delivery limit, 20 by default from RabbitMQ 4.0).
	 * @return whether a requeue is allowed
	 */
	@Override
	public boolean mayRequeue() {
		return this.countedReturns == 0;
	}

	/**
	 * Whether the channel that delivered the message is still open: once it has closed,
	 * the broker has put the message back in its queue, and it must not be processed or
	 * forwarded from here any more (that would make a duplicate).
	 * @return whether it is open
	 */
	@Override
	public boolean isChannelOpen() {
		return this.channel.isOpen();
	}

	/**
	 * The channel that delivered the message.
	 * @return the real channel
	 */
	@Override
	public Object consumer() {
		return this.channel;
	}

	Channel channel() {
		return this.channel;
	}

	@Override
	public void ack() {
		if (this.done.compareAndSet(false, true)) {
			if (this.outstanding != null) {
				this.outstanding.ack(List.of(this));
			}
			else {
				sendAck();
			}
		}
	}

	private void sendAck() {
		try {
			this.channel.basicAck(deliveryTag(), false);
		}
		catch (IOException | RuntimeException ex) {
			logger.warn("Could not ack message " + Deliveries.describe(this.message) + " (" + ex.getMessage()
					+ "); the broker will deliver it again");
		}
	}

	/**
	 * Ack processed deliveries of one channel: together, with one
	 * {@code basic.ack(multiple)}, up to the first earlier delivery of the channel that
	 * is still outstanding, and the rest once it is acked (see
	 * {@link OutstandingDeliveries}).
	 * @param acknowledgements the deliveries' acknowledgements, all of one channel
	 */
	public static void ackAll(List<Acknowledgement> acknowledgements) {
		List<Acknowledgement> acking = new ArrayList<>(acknowledgements.size());
		for (Acknowledgement acknowledgement : acknowledgements) {
			if (acknowledgement.done.compareAndSet(false, true)) {
				acking.add(acknowledgement);
			}
		}
		if (acking.isEmpty()) {
			return;
		}
		OutstandingDeliveries outstanding = acking.get(0).outstanding;
		if (outstanding != null) {
			outstanding.ack(acking);
			return;
		}
		for (Acknowledgement acknowledgement : acking) {
			acknowledgement.sendAck();
		}
	}

	/**
	 * Send the ack of deliveries of one channel, in ascending order, that no other
	 * unsettled delivery lies between: one {@code basic.ack(multiple)} up to the last.
	 * @param acking the acknowledgements, claimed already
	 */
	static void sendAckUpTo(List<Acknowledgement> acking) {
		if (acking.size() == 1) {
			acking.get(0).sendAck();
			return;
		}
		Acknowledgement lastOne = acking.get(acking.size() - 1);
		try {
			lastOne.channel.basicAck(lastOne.deliveryTag(), true);
		}
		catch (IOException | RuntimeException ex) {
			logger.warn("Could not ack " + acking.size() + " messages up to " + Deliveries.describe(lastOne.message)
					+ " (" + ex.getMessage() + "); the broker will deliver them again");
		}
	}

	// Only once the settlement was sent: until then no multiple ack may cover it.
	private void settled() {
		if (this.outstanding != null) {
			this.outstanding.remove(deliveryTag());
		}
	}

	@Override
	public void requeue() {
		if (this.done.compareAndSet(false, true)) {
			try {
				this.channel.basicNack(deliveryTag(), false, true);
			}
			catch (IOException | RuntimeException ex) {
				logger.warn("Could not requeue message " + Deliveries.describe(this.message) + " (" + ex.getMessage()
						+ "); the broker will deliver it again");
			}
			finally {
				settled();
			}
		}
	}

	/**
	 * Settle nothing now: the application stops, and the consumer channel gives the
	 * message back, uncounted, once its container stops consuming (see
	 * {@link ConsumerChannels}). Given back earlier, it could be delivered again to a
	 * consumer that has not stopped yet, and be returned twice.
	 */
	@Override
	public void leaveToChannel() {
		if (this.done.compareAndSet(false, true) && this.outstanding != null) {
			this.outstanding.leftToChannel(deliveryTag());
		}
	}

	/**
	 * Give the message back to its queue as a failed delivery ({@code basic.reject} with
	 * requeue), for a queue with delayed retry to deliver it again after its delay: the
	 * broker backend's retry. The broker counts it ({@code x-delivery-count}), which is
	 * the message's retry count there.
	 */
	public void rejectForRetry() {
		if (this.done.compareAndSet(false, true)) {
			try {
				this.channel.basicReject(deliveryTag(), true);
			}
			catch (IOException | RuntimeException ex) {
				logger.warn("Could not give message " + Deliveries.describe(this.message) + " back to its queue for "
						+ "its retry (" + ex.getMessage() + "); the broker will deliver it again");
			}
			finally {
				settled();
			}
		}
	}

	long deliveryTag() {
		return this.message.getMessageProperties().getDeliveryTag();
	}

}
