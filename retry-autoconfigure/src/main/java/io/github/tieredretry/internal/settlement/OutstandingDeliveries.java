package io.github.tieredretry.internal.settlement;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

import org.jspecify.annotations.Nullable;

/**
 * The deliveries of one consumer channel that the starter has not settled yet, by
 * delivery tag, and the acks that wait to be sent together.
 * <p>
 * A {@code basic.ack} with {@code multiple} settles every unacknowledged delivery of the
 * channel up to its tag. Processed deliveries are therefore acked together only up to the
 * first delivery that is still outstanding (a failed message waiting for its forward's
 * confirm, say); the acks above it wait for it, and when it is acked, one multiple ack
 * covers it and them. They wait at most {@link #ACK_DEFERRAL} (by default): a delivery
 * held longer (its forward paused, the broker blocking publishers) must not keep the
 * channel's prefetch full, so they are then acked one by one, as before.
 * <p>
 * A tag is added before any later delivery of the channel can be settled (the consumer
 * hands deliveries over in order) and removed only once its settlement has been sent, so
 * a multiple ack never settles a delivery that another thread settles on its own. A
 * delivery left to its closing channel is never covered by a multiple ack either.
 * <p>
 * When its container stops, the channel waits for them to be settled before it gives back
 * what is left (see {@link ConsumerChannels}).
 */
public final class OutstandingDeliveries {

	/**
	 * How long processed deliveries wait for an earlier outstanding one to be acked with
	 * them: longer than a forward's confirm takes when the broker is well, short enough
	 * that a held one never fills the prefetch.
	 */
	static final Duration ACK_DEFERRAL = Duration.ofMillis(20);

	private final ConcurrentSkipListSet<Long> tags = new ConcurrentSkipListSet<>();

	/** Unacknowledged on the broker, left for the closing channel to give back. */
	private final ConcurrentSkipListSet<Long> leftToChannel = new ConcurrentSkipListSet<>();

	/**
	 * Processed deliveries whose ack waits for an earlier one; guarded by {@code this}.
	 */
	private final TreeMap<Long, Acknowledgement> waitingToAck = new TreeMap<>();

	/** Runs a task after a delay, on a thread that may send frames. */
	private final BiConsumer<Runnable, Duration> later;

	private final Duration ackDeferral;

	/**
	 * Whether the acks still waiting will be sent one by one soon; guarded by
	 * {@code this}.
	 */
	private boolean ackEachScheduled;

	/** Threads waiting in {@link #awaitNone}: only then does a removal notify. */
	private final AtomicInteger waiting = new AtomicInteger();

	/**
	 * Create the deliveries of a channel.
	 * @param later runs a task after a delay (the acks still waiting after the deferral)
	 * @param ackDeferral how long processed deliveries wait for an earlier one
	 */
	OutstandingDeliveries(BiConsumer<Runnable, Duration> later, Duration ackDeferral) {
		this.later = later;
		this.ackDeferral = ackDeferral;
	}

	void add(long deliveryTag) {
		this.tags.add(deliveryTag);
	}

	/**
	 * The delivery's settlement was sent: it is outstanding no more, and the acks that
	 * waited for it may go.
	 * @param deliveryTag its tag
	 */
	void remove(long deliveryTag) {
		this.tags.remove(deliveryTag);
		synchronized (this) {
			if (!this.waitingToAck.isEmpty()) {
				ackCovered();
			}
		}
		notifyWaiters();
	}

	/**
	 * The delivery is left unacknowledged for its closing channel to give back: the
	 * starter settles it no more, and no multiple ack may cover it.
	 * @param deliveryTag its tag
	 */
	void leftToChannel(long deliveryTag) {
		this.leftToChannel.add(deliveryTag);
		this.tags.remove(deliveryTag);
		notifyWaiters();
	}

	/**
	 * Ack processed deliveries: now, together, up to the first earlier delivery still
	 * outstanding; the rest once it is acked, or one by one after {@link #ACK_DEFERRAL}.
	 * @param acknowledgements their acknowledgements, claimed by the caller
	 */
	void ack(List<Acknowledgement> acknowledgements) {
		synchronized (this) {
			for (Acknowledgement acknowledgement : acknowledgements) {
				this.waitingToAck.put(acknowledgement.deliveryTag(), acknowledgement);
			}
			ackCovered();
			if (!this.waitingToAck.isEmpty() && !this.ackEachScheduled) {
				this.ackEachScheduled = true;
				this.later.accept(this::ackEachStillWaiting, this.ackDeferral);
			}
		}
		notifyWaiters();
	}

	// Guarded by this: the frames go out in the order the tags were chosen.
	private void ackCovered() {
		if (this.waitingToAck.isEmpty()) {
			return;
		}
		Long blocking = firstOutstandingNotWaiting();
		Long left = this.leftToChannel.isEmpty() ? null : this.leftToChannel.first();
		if (left != null && (blocking == null || left < blocking)) {
			blocking = left;
		}
		SortedMap<Long, Acknowledgement> covered = (blocking != null) ? this.waitingToAck.headMap(blocking)
				: this.waitingToAck;
		if (covered.isEmpty()) {
			return;
		}
		List<Acknowledgement> acking = new ArrayList<>(covered.values());
		covered.clear();
		Acknowledgement.sendAckUpTo(acking);
		acking.forEach((acknowledgement) -> this.tags.remove(acknowledgement.deliveryTag()));
	}

	private @Nullable Long firstOutstandingNotWaiting() {
		for (Long tag : this.tags) {
			if (!this.waitingToAck.containsKey(tag)) {
				return tag;
			}
		}
		return null;
	}

	// The earlier delivery is held longer than a confirm takes: no more waiting.
	private void ackEachStillWaiting() {
		synchronized (this) {
			this.ackEachScheduled = false;
			ackCovered();
			List<Acknowledgement> acking = new ArrayList<>(this.waitingToAck.values());
			this.waitingToAck.clear();
			for (Acknowledgement acknowledgement : acking) {
				Acknowledgement.sendAckUpTo(List.of(acknowledgement));
				this.tags.remove(acknowledgement.deliveryTag());
			}
		}
		notifyWaiters();
	}

	private void notifyWaiters() {
		if (this.waiting.get() > 0) {
			synchronized (this) {
				notifyAll();
			}
		}
	}

	int size() {
		return this.tags.size();
	}

	/**
	 * Wait until no delivery is outstanding.
	 * @param timeout how long to wait at most
	 * @return whether none is outstanding
	 * @throws InterruptedException when interrupted while waiting
	 */
	boolean awaitNone(Duration timeout) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		synchronized (this) {
			this.waiting.incrementAndGet();
			try {
				while (!this.tags.isEmpty()) {
					long left = deadline - System.nanoTime();
					if (left <= 0) {
						return false;
					}
					wait(Math.max(1, left / 1_000_000));
				}
				return true;
			}
			finally {
				this.waiting.decrementAndGet();
			}
		}
	}

}
