package io.github.tieredretry.internal.parkinglot;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Spaces a replay's publishes so that it moves at most {@code rate} messages per second:
 * live traffic on the origin queues keeps its share of the consumers. No bursts: a replay
 * that was slowed down by the broker does not catch up faster than the rate afterwards.
 */
final class ReplayPacer {

	private final long intervalNanos;

	private final LongSupplier nanoTime;

	private final Waiter waiter;

	private boolean started;

	private long next;

	/**
	 * Create a pacer.
	 * @param rate messages per second, positive
	 * @param nanoTime the time source, like {@link System#nanoTime()}
	 * @param waiter waits, and says whether the replay was stopped meanwhile
	 */
	ReplayPacer(double rate, LongSupplier nanoTime, Waiter waiter) {
		this.intervalNanos = Math.max(1, Math.round(TimeUnit.SECONDS.toNanos(1) / rate));
		this.nanoTime = nanoTime;
		this.waiter = waiter;
	}

	/**
	 * Wait until the next publish may go.
	 * @return {@code false} when the replay was stopped while waiting
	 */
	boolean awaitTurn() {
		long now = this.nanoTime.getAsLong();
		if (this.started && now - this.next < 0) {
			if (this.waiter.await(this.next - now)) {
				return false;
			}
			now = this.next;
		}
		this.next = ((this.started && this.next - now > 0) ? this.next : now) + this.intervalNanos;
		this.started = true;
		return true;
	}

	/** Waits for a while, unless the replay is stopped first. */
	@FunctionalInterface
	interface Waiter {

		/**
		 * Wait.
		 * @param nanos how long
		 * @return whether the replay was stopped (the wait then ends early)
		 */
		boolean await(long nanos);

	}

}
