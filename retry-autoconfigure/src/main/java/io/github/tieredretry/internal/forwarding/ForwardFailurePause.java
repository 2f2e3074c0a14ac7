package io.github.tieredretry.internal.forwarding;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Slows a listener's consumers down while its forwards keep failing (broker trouble,
 * missing topology), so that failed messages do not pile up unacknowledged in a hot loop
 * while their forwards are tried again.
 * <p>
 * It counts outages, not failures: every failure that happens while the pause of an
 * earlier one still runs belongs to the same episode (a blip fails every forward in
 * flight at once, and must not push the pause to its maximum). A failure after the pause
 * has run out, with no successful forward in between, starts the next episode, whose
 * pause is twice as long, up to a maximum; a successful forward ends the count.
 * <p>
 * This deliberately blocks the consumer thread: while the broker cannot take forwards, no
 * message can make progress through a retryable listener anyway, and the unacked message
 * stays safe in its queue.
 */
public final class ForwardFailurePause {

	private final long initialMillis;

	private final long maxMillis;

	private final LongSupplier nanoClock;

	/**
	 * Consecutive failure episodes; written under {@code this}, read by every message
	 * without a lock.
	 */
	private volatile int episodes;

	private volatile long pausedUntilNanos;

	public ForwardFailurePause(Duration initial, Duration max) {
		this(initial, max, System::nanoTime);
	}

	ForwardFailurePause(Duration initial, Duration max, LongSupplier nanoClock) {
		this.initialMillis = Math.max(0, initial.toMillis());
		this.maxMillis = Math.max(this.initialMillis, max.toMillis());
		this.nanoClock = nanoClock;
	}

	/**
	 * The pause of the given consecutive failure episode.
	 * @param episode consecutive episodes, at least 1
	 * @return the pause in milliseconds
	 */
	long pauseMillis(int episode) {
		int doublings = Math.min(Math.max(episode - 1, 0), 30);
		// Shifting by fewer places than the leading zeros can neither overflow nor wrap
		// to zero.
		long pause = (doublings < Long.numberOfLeadingZeros(this.initialMillis)) ? this.initialMillis << doublings
				: Long.MAX_VALUE;
		return Math.min(pause, this.maxMillis);
	}

	/**
	 * Record a failed forward, without pausing.
	 * @return how long the failed message should wait before it goes back to its queue,
	 * in milliseconds: the rest of the current pause
	 */
	public synchronized long recordFailure() {
		long now = this.nanoClock.getAsLong();
		long remaining = this.pausedUntilNanos - now;
		if (this.episodes > 0 && remaining > 0) {
			// The same outage: this failure waits with the others.
			return TimeUnit.NANOSECONDS.toMillis(remaining + 999_999);
		}
		this.episodes++;
		long pause = pauseMillis(this.episodes);
		this.pausedUntilNanos = now + TimeUnit.MILLISECONDS.toNanos(pause);
		return pause;
	}

	/**
	 * Pause the calling consumer while the pause of the current episode lasts: a forward
	 * that fails after the consumer has moved on (no confirm, a nack) slows the consumer
	 * down from its next message.
	 */
	public void awaitPause() {
		if (consecutiveFailures() == 0) {
			return;
		}
		long wait = this.pausedUntilNanos - this.nanoClock.getAsLong();
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

	/** Record a successful forward: the outage is over. */
	public void reset() {
		if (this.episodes != 0) {
			synchronized (this) {
				this.episodes = 0;
			}
		}
	}

	/**
	 * Consecutive failure episodes since the last successful forward.
	 * @return the episodes
	 */
	public int consecutiveFailures() {
		return this.episodes;
	}

}
