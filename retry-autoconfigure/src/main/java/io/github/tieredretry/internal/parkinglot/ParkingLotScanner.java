package io.github.tieredretry.internal.parkinglot;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.locks.ReentrantLock;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.ShutdownSignalException;
import io.github.tieredretry.internal.broker.RealChannels;

import org.springframework.amqp.AmqpIOException;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.connection.RabbitUtils;

/**
 * The one way the parking lot is read: a pass of {@code basic.get}s with manual
 * acknowledgement on one real channel, looking at no more messages than the parking lot
 * held when the pass started (so messages parked meanwhile, including replayed ones that
 * fail again, are not looked at in that pass). A message the visitor removes is acked at
 * once; every message it keeps stays unacknowledged until the end of the pass and is then
 * requeued with one {@code basic.nack}. Should the application die half-way, the broker
 * requeues what the closed channel held: nothing is ever lost.
 * <p>
 * Requeued messages go back to their place (classic queues, and quorum queues with a
 * delivery limit, as the starter declares them), so the messages a pass kept are, in
 * order, the first ones the next pass reads. Passes of one instance run one at a time, in
 * the order they asked.
 */
final class ParkingLotScanner {

	private static final Duration RETURN_WAIT = Duration.ofSeconds(1);

	private final ConnectionFactory connectionFactory;

	private final String parkingLot;

	// Fair: a background replay takes the lock again as soon as a pass ends, so a peek
	// behind an unfair lock could wait for the whole replay instead of one pass.
	private final ReentrantLock passLock = new ReentrantLock(true);

	ParkingLotScanner(ConnectionFactory connectionFactory, String parkingLot) {
		this.connectionFactory = connectionFactory;
		this.parkingLot = parkingLot;
	}

	String parkingLot() {
		return this.parkingLot;
	}

	/**
	 * Read the parking lot once.
	 * @param bound the most messages to look at (the parking lot's depth bounds it too)
	 * @param visitor decides what happens to each message
	 * @return how many messages there were and how many were looked at
	 */
	Pass pass(long bound, Visitor visitor) {
		return withChannel((channel) -> {
			long depth = channel.queueDeclarePassive(this.parkingLot).getMessageCount();
			long limit = Math.min(depth, bound);
			visitor.started(depth);
			int count = 0;
			int removed = 0;
			long highestHeld = 0;
			boolean exhausted = false;
			while (visitor.wantsMore()) {
				GetResponse message = (count < limit) ? channel.basicGet(this.parkingLot, false) : null;
				if (message == null) {
					exhausted = true;
					break;
				}
				count++;
				long deliveryTag = message.getEnvelope().getDeliveryTag();
				Decision decision = visitor.visit(message);
				if (decision == Decision.REMOVE) {
					channel.basicAck(deliveryTag, false);
					removed++;
				}
				else {
					highestHeld = deliveryTag;
					if (decision == Decision.KEEP_AND_STOP) {
						break;
					}
				}
			}
			if (highestHeld > 0) {
				// nack, not reject: RabbitMQ 4 does not count a nack as a failed delivery
				// of a quorum message.
				channel.basicNack(highestHeld, true, true);
				awaitReturned(channel, depth - removed);
			}
			return new Pass(depth, count, exhausted);
		});
	}

	/**
	 * Wait, briefly, until the parking lot counts as many ready messages as the pass left
	 * in it. A quorum queue counts a requeued message as ready only once the queue has
	 * applied its return, which can lag the nack: the next pass, bounded by that count,
	 * would look at fewer messages than are parked, or at none, and a replay right after
	 * a peek would move nothing. Bounded, as another reader may hold some of them.
	 * @param channel the pass's channel
	 * @param expected the ready messages the pass left: those it found less those it
	 * removed
	 */
	private void awaitReturned(Channel channel, long expected) throws IOException {
		long deadline = System.nanoTime() + RETURN_WAIT.toNanos();
		while (channel.queueDeclarePassive(this.parkingLot).getMessageCount() < expected
				&& System.nanoTime() < deadline) {
			try {
				// Not a consumer thread: the caller of a peek, replay, purge or retention
				// pass,
				// which holds the pass lock anyway.
				Thread.sleep(2);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

	/**
	 * The ready messages of the parking lot, read without looking at any.
	 * @return its depth
	 */
	long depth() {
		return withChannel((channel) -> (long) channel.queueDeclarePassive(this.parkingLot).getMessageCount());
	}

	/**
	 * Remove every message of the parking lot.
	 * @return how many were removed
	 */
	long purgeAll() {
		return withChannel((channel) -> (long) channel.queuePurge(this.parkingLot).getMessageCount());
	}

	private <T> T withChannel(ChannelCallback<T> callback) {
		this.passLock.lock();
		Connection connection = null;
		Channel cached = null;
		try {
			connection = this.connectionFactory.createConnection();
			cached = connection.createChannel(false);
			// Every get, ack and nack on the one channel that delivered: a delivery tag
			// means nothing on another, and the cached-channel proxy would silently swap
			// in a new channel if this one died.
			return callback.doWith(RealChannels.target(cached));
		}
		catch (IOException ex) {
			throw brokerFailure(ex);
		}
		finally {
			// Never back to the channel cache: a physical close makes the broker requeue
			// anything still held, should the nack above not have been sent.
			RealChannels.closeForGood(cached);
			RabbitUtils.closeConnection(connection);
			this.passLock.unlock();
		}
	}

	private RuntimeException brokerFailure(IOException ex) {
		if (ex.getCause() instanceof ShutdownSignalException signal
				&& RabbitUtils.isPassiveDeclarationChannelClose(signal)) {
			return new IllegalStateException("The parking lot '" + this.parkingLot + "' does not exist on the broker",
					ex);
		}
		return new AmqpIOException(ex);
	}

	/**
	 * What a pass did.
	 *
	 * @param depth ready messages when it started
	 * @param count messages looked at
	 * @param exhausted whether it ended because it had looked at every message it could
	 * (rather than because the visitor wanted no more)
	 */
	record Pass(long depth, int count, boolean exhausted) {
	}

	/** What happens to a message a pass looked at. */
	enum Decision {

		/** Leave the message parked (requeued at the end of the pass). */
		KEEP,

		/** Ack the message: it is gone from the parking lot. */
		REMOVE,

		/** Leave the message parked and look at no further message. */
		KEEP_AND_STOP

	}

	/** Decides, message by message, what a pass does. */
	interface Visitor {

		/**
		 * The pass starts.
		 * @param depth the messages the parking lot holds, the most the pass looks at
		 */
		default void started(long depth) {
		}

		/**
		 * Whether to look at another message.
		 * @return whether to go on
		 */
		boolean wantsMore();

		/**
		 * Decide about one message.
		 * @param message the message, held unacknowledged
		 * @return the decision
		 */
		Decision visit(GetResponse message);

	}

	@FunctionalInterface
	private interface ChannelCallback<T> {

		T doWith(Channel channel) throws IOException;

	}

}
