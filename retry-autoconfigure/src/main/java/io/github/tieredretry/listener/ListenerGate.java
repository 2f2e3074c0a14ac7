package io.github.tieredretry.listener;

import java.time.Duration;

/**
 * Lets a retryable listener's messages through to the listener, or holds its consumers
 * back while the listener's failures say that its downstream is down (a circuit breaker).
 * Told the outcome of every message it let through.
 */
public interface ListenerGate {

	/** A gate that always lets messages through and ignores outcomes. */
	ListenerGate ALWAYS_OPEN = new ListenerGate() {

		@Override
		public Passage awaitPassage() {
			return Passage.PASS;
		}

		@Override
		public void succeeded(Duration took) {
		}

		@Override
		public void failed(Duration took, Throwable failure) {
		}

		@Override
		public void ignored() {
		}

	};

	/**
	 * Whether the gate holds the listener's consumers back now (a consumer that asked for
	 * passage would wait).
	 * @return whether the listener is paused
	 */
	default boolean isPaused() {
		return false;
	}

	/**
	 * Called on the consumer thread before the listener is invoked; waits while the gate
	 * is closed to this listener. The message in hand stays unacknowledged meanwhile, and
	 * the consumer takes no other.
	 * @return how the message may pass
	 */
	Passage awaitPassage();

	/** How a message passes the gate. */
	enum Passage {

		/** Invoke the listener; a failure is retried or parked as usual. */
		PASS,

		/**
		 * Invoke the listener to see whether its downstream is back. If it fails again
		 * the consumer holds the message and tries it again as a later probe: a probe
		 * spends none of its retries, is never parked for the outage, and is not given
		 * back to its queue (where a quorum queue would count the return).
		 */
		PROBE,

		/**
		 * The application stops: the message is left to its consumer channel, which gives
		 * it back when its container stops consuming.
		 */
		STOPPED

	}

	/**
	 * The listener returned normally.
	 * @param took how long it ran
	 */
	void succeeded(Duration took);

	/**
	 * The listener failed in a way a retry may fix (a sign that its downstream is in
	 * trouble).
	 * @param took how long it ran
	 * @param failure what it threw
	 */
	void failed(Duration took, Throwable failure);

	/**
	 * The listener failed in a way no retry fixes (a bad message): not held against its
	 * downstream.
	 */
	void ignored();

}
