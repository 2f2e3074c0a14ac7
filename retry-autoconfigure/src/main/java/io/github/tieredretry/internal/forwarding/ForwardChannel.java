package io.github.tieredretry.internal.forwarding;

import java.io.IOException;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmListener;
import com.rabbitmq.client.ReturnListener;
import com.rabbitmq.client.ShutdownListener;
import com.rabbitmq.client.ShutdownSignalException;
import io.github.tieredretry.internal.broker.RealChannels;
import org.jspecify.annotations.Nullable;

/**
 * A confirm channel that many forwards share, as a client publishing on its own would:
 * each publish is remembered by its sequence number and settled by the confirm (single or
 * {@code multiple}) that covers it.
 * <p>
 * Only forwards to the starter's own exchanges go here (the tiers, the return exchange,
 * the parking lot through the default exchange). A channel that dies (a deleted exchange,
 * a lost connection) fails every publish in flight on it, and nothing else: those
 * forwards' originals are held and forwarded again, never lost; a forward the broker may
 * have taken before the channel died then exists twice.
 * <p>
 * A {@code mandatory} return carries no sequence number: it is matched to the oldest
 * publish in flight with the same exchange, routing key and body. Two such publishes are
 * the same message sent the same way: which of them was returned cannot matter.
 */
final class ForwardChannel implements ConfirmListener, ReturnListener, ShutdownListener {

	/** As the checked-out cache entry, to let go of. */
	private final Channel cached;

	/** Every call goes here: never a silently reopened channel. */
	private final Channel real;

	private final ConcurrentNavigableMap<Long, Publication> inFlight = new ConcurrentSkipListMap<>();

	private volatile boolean dead;

	private ForwardChannel(Channel cached) {
		this.cached = cached;
		this.real = RealChannels.target(cached);
	}

	/**
	 * Take a cached confirm channel for forwards for as long as it lives.
	 * @param cached a channel in confirm mode, checked out of the cache
	 * @return the forward channel
	 */
	static ForwardChannel on(Channel cached) {
		ForwardChannel channel = new ForwardChannel(cached);
		channel.real.addConfirmListener(channel);
		channel.real.addReturnListener(channel);
		channel.real.addShutdownListener(channel);
		return channel;
	}

	/**
	 * Whether new forwards may go out on it.
	 * @return whether it is open
	 */
	boolean isUsable() {
		return !this.dead && this.real.isOpen();
	}

	/**
	 * On the publisher thread: publish and remember the publish until it is settled.
	 * @param publication the publish
	 * @param exchange the exchange
	 * @param routingKey the routing key
	 * @param properties the properties to publish
	 * @param body the body
	 */
	void publish(Publication publication, String exchange, String routingKey, AMQP.BasicProperties properties,
			byte[] body) {
		// Remembered before the publish: its confirm may arrive before basicPublish
		// returns.
		long sequenceNumber = this.real.getNextPublishSeqNo();
		publication.sentAs(sequenceNumber);
		this.inFlight.put(sequenceNumber, publication);
		try {
			this.real.basicPublish(exchange, routingKey, true, properties, body);
		}
		catch (IOException | RuntimeException ex) {
			died(ex, this.real.getCloseReason());
			return;
		}
		if (!this.real.isOpen()) {
			// Closed between the check and the publish: its shutdown listener may have
			// run before this publish was remembered.
			died(null, this.real.getCloseReason());
		}
	}

	int frameMax() {
		return this.real.getConnection().getFrameMax();
	}

	/**
	 * Forget a publish that was settled otherwise (its confirm timed out): a late confirm
	 * for it settles nothing.
	 * @param sequenceNumber its sequence number
	 * @param publication the publish
	 */
	void forget(long sequenceNumber, Publication publication) {
		this.inFlight.remove(sequenceNumber, publication);
	}

	@Override
	public void handleAck(long deliveryTag, boolean multiple) {
		confirmed(deliveryTag, multiple, true);
	}

	@Override
	public void handleNack(long deliveryTag, boolean multiple) {
		confirmed(deliveryTag, multiple, false);
	}

	// On the connection's I/O thread.
	private void confirmed(long deliveryTag, boolean multiple, boolean ack) {
		if (!multiple) {
			Publication publication = this.inFlight.remove(deliveryTag);
			if (publication != null) {
				publication.confirmed(ack);
			}
			return;
		}
		Iterator<Map.Entry<Long, Publication>> covered = this.inFlight.headMap(deliveryTag, true).entrySet().iterator();
		while (covered.hasNext()) {
			Publication publication = covered.next().getValue();
			covered.remove();
			publication.confirmed(ack);
		}
	}

	// On the connection's I/O thread, before the confirm of the same publish.
	@Override
	public void handleReturn(int replyCode, String replyText, String exchange, String routingKey,
			AMQP.BasicProperties properties, byte[] body) {
		for (Publication publication : this.inFlight.values()) {
			if (publication.returnedAs(exchange, routingKey, body, replyCode + " " + replyText)) {
				return;
			}
		}
	}

	@Override
	public void shutdownCompleted(ShutdownSignalException cause) {
		died(null, cause);
	}

	// Every publish in flight fails: none of them will be confirmed. Only those sent
	// to the exchange whose absence closed the channel fail as a missing exchange.
	private void died(@Nullable Throwable failure, @Nullable ShutdownSignalException cause) {
		this.dead = true;
		Throwable reason = (cause != null) ? cause : failure;
		Iterator<Publication> inFlight = this.inFlight.values().iterator();
		while (inFlight.hasNext()) {
			Publication publication = inFlight.next();
			inFlight.remove();
			publication.channelDied(reason);
		}
	}

	/**
	 * Let go of it: back to the cache when it is still open and nothing waits for a
	 * confirm on it, else closed for good. Closing waits for the broker: never on the
	 * connection's I/O thread.
	 */
	void letGo() {
		if (isUsable() && this.inFlight.isEmpty()) {
			this.real.removeConfirmListener(this);
			this.real.removeReturnListener(this);
			this.real.removeShutdownListener(this);
			RealChannels.release(this.cached);
		}
		else {
			this.dead = true;
			RealChannels.closeForGood(this.cached);
		}
	}

}
