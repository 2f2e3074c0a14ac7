package io.github.tieredretry.internal.settlement;

import java.time.Duration;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The deliveries of one consumer channel that the starter has not settled yet, by
 * delivery tag. Processed messages of a batch can then be acked with one
 * {@code basic.ack(multiple)}, as Spring AMQP acks a plain batch, when no other delivery
 * of the channel up to the last of them is still outstanding (a failed message waiting
 * for its forward's confirm, say), which that ack would settle too.
 * <p>
 * A tag is added before any later delivery of the channel can be settled (the consumer
 * hands deliveries over in order) and removed only once its settlement has been sent, so
 * a multiple ack never settles a delivery that another thread acks on its own.
 * <p>
 * When its container stops, the channel waits for them to be settled before it gives back
 * what is left (see {@link ConsumerChannels}).
 */
public final class OutstandingDeliveries {

	private final ConcurrentSkipListSet<Long> tags = new ConcurrentSkipListSet<>();

	/** Threads waiting in {@link #awaitNone}: only then does a removal notify. */
	private final AtomicInteger waiting = new AtomicInteger();

	void add(long deliveryTag) {
		this.tags.add(deliveryTag);
	}

	void remove(long deliveryTag) {
		this.tags.remove(deliveryTag);
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

	/**
	 * Whether exactly {@code count} deliveries up to {@code last} are outstanding: those
	 * about to be acked together, and no other.
	 * @param last the highest tag to ack
	 * @param count how many are acked
	 * @return whether one multiple ack settles those and nothing else
	 */
	boolean onlyThese(long last, int count) {
		return this.tags.headSet(last, true).size() == count;
	}

}
