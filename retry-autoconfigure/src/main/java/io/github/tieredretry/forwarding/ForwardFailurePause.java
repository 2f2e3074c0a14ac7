package io.github.tieredretry.forwarding;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Slows a listener's consumers down while its forwards keep failing (broker trouble, missing topology), so that a
 * message that goes back to its queue is not redelivered and failed again in a hot loop. The pause
 * doubles with each consecutive failure up to a maximum and resets after the next successful forward.
 * <p>
 * This deliberately blocks the consumer thread: while the broker cannot take forwards, no message can
 * make progress through a retryable listener anyway, and the unacked message stays safe in its queue.
 */
public final class ForwardFailurePause {

	private final long initialMillis;

	private final long maxMillis;

	private final AtomicInteger consecutiveFailures = new AtomicInteger();

	private volatile long pausedUntilNanos;

	public ForwardFailurePause(Duration initial, Duration max) {
		this.initialMillis = Math.max(0, initial.toMillis());
		this.maxMillis = Math.max(this.initialMillis, max.toMillis());
	}

	/**
	 * The pause that follows the given number of consecutive failures.
	 * @param failures consecutive failures, at least 1
	 * @return the pause in milliseconds
	 */
	long pauseMillis(int failures) {
		int doublings = Math.min(Math.max(failures - 1, 0), 30);
		// Shifting by fewer places than the leading zeros can neither overflow nor wrap to zero.
		long pause = (doublings < Long.numberOfLeadingZeros(this.initialMillis)) ? this.initialMillis << doublings
				: Long.MAX_VALUE;
		return Math.min(pause, this.maxMillis);
	}

	/**
	 * Record a failed forward, without pausing.
	 * @return the pause the failure calls for, in milliseconds
	 */
	public long recordFailure() {
		long pause = pauseMillis(this.consecutiveFailures.incrementAndGet());
		this.pausedUntilNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pause);
		return pause;
	}

	/**
	 * Pause the calling consumer while the pause of the last failed forward lasts: a forward that fails
	 * after the consumer has moved on (no confirm, a nack) slows the consumer down from its next message.
	 */
	public void awaitPause() {
		if (this.consecutiveFailures.get() == 0) {
			return;
		}
		long wait = this.pausedUntilNanos - System.nanoTime();
		if (wait > 0) {
			try {
				TimeUnit.NANOSECONDS.sleep(wait);
			}
			catch (InterruptedException ex) {
				// The container is stopping.
				Thread.currentThread().interrupt();
			}
		}
	}

	/** Record a successful forward. */
	public void reset() {
		if (this.consecutiveFailures.get() != 0) {
			this.consecutiveFailures.set(0);
		}
	}

	public int consecutiveFailures() {
		return this.consecutiveFailures.get();
	}

}
