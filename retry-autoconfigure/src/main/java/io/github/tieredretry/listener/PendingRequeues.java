package io.github.tieredretry.listener;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;

import io.github.tieredretry.forwarding.RetryExecutors;

/**
 * Messages that go back to their queue after a pause (their forward failed, the broker
 * blocks publishing): unacked until then. When the application stops they go back at
 * once, with {@code basic.nack}, before the listener containers close their channels: a
 * message put back by a closing channel counts as a failed delivery on RabbitMQ 4.3
 * (towards a quorum queue's delivery limit), a nack does not.
 */
final class PendingRequeues {

	private final RetryExecutors executors;

	private final Set<Acknowledgement> pending = ConcurrentHashMap.newKeySet();

	private volatile boolean stopping;

	PendingRequeues(RetryExecutors executors) {
		this.executors = executors;
	}

	/**
	 * Give a message back to its queue after a pause, so that it does not come straight
	 * back.
	 * @param acknowledgement the message's acknowledgement
	 * @param delayMillis the pause
	 */
	void requeueLater(Acknowledgement acknowledgement, long delayMillis) {
		if (this.stopping || delayMillis <= 0) {
			acknowledgement.requeue();
			return;
		}
		this.pending.add(acknowledgement);
		try {
			this.executors.schedule(() -> requeue(acknowledgement), Duration.ofMillis(delayMillis),
					this.executors.acks());
		}
		catch (RejectedExecutionException ex) {
			requeue(acknowledgement);
		}
		if (this.stopping) {
			// Stopped meanwhile: do not leave it for the closing channel.
			requeue(acknowledgement);
		}
	}

	private void requeue(Acknowledgement acknowledgement) {
		if (this.pending.remove(acknowledgement)) {
			acknowledgement.requeue();
		}
	}

	/**
	 * The application stops: every pending message goes back now, and later ones at once.
	 */
	void requeueAllNow() {
		this.stopping = true;
		this.pending.forEach(this::requeue);
	}

}
