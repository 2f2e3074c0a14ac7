package io.github.tieredretry.internal.parkinglot;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Lets an operator stop a running replay: the replay checks it before every publish, and
 * a wait between publishes ends at once when it is stopped.
 */
final class ReplayControl {

	private final CountDownLatch stopped = new CountDownLatch(1);

	void stop() {
		this.stopped.countDown();
	}

	boolean isStopped() {
		return this.stopped.getCount() == 0;
	}

	/**
	 * Wait, unless stopped.
	 * @param nanos the most to wait
	 * @return whether the replay was stopped
	 */
	boolean awaitStop(long nanos) {
		try {
			return this.stopped.await(nanos, TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			// The application is stopping: end the replay, leaving everything not yet
			// moved parked.
			Thread.currentThread().interrupt();
			stop();
			return true;
		}
	}

}
