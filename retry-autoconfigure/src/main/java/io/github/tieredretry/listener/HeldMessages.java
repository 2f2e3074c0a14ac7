package io.github.tieredretry.listener;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;

import io.github.tieredretry.forwarding.RetryExecutors;

/**
 * Messages held unacknowledged while a pause runs: at its end each one's forward is tried
 * again (the forward failed: the message is not given back to its queue, where a quorum
 * queue would count the return towards its delivery limit), or it goes back to its queue
 * (the wrapper itself failed on it). When the application stops they all go back at once,
 * with {@code basic.nack}, before the listener containers close their channels: a message
 * put back by a closing channel counts as a failed delivery on RabbitMQ 4.3, a nack does
 * not.
 */
final class HeldMessages {

	private final RetryExecutors executors;

	private final Set<Acknowledgement> held = ConcurrentHashMap.newKeySet();

	private volatile boolean stopping;

	HeldMessages(RetryExecutors executors) {
		this.executors = executors;
	}

	/**
	 * Give a message back to its queue after a pause, so that it does not come straight
	 * back.
	 * @param acknowledgement the message's acknowledgement
	 * @param delayMillis the pause
	 */
	void requeueLater(Acknowledgement acknowledgement, long delayMillis) {
		holdFor(acknowledgement, delayMillis, acknowledgement::requeue);
	}

	/**
	 * Hold a message whose forward failed and forward it again after a pause. If its
	 * channel has closed meanwhile, the broker has put it back in its queue already, and
	 * it is not forwarded (that would make a duplicate).
	 * @param acknowledgement the message's acknowledgement
	 * @param delayMillis the pause
	 * @param forwardAgain forwards it again
	 */
	void forwardLater(Acknowledgement acknowledgement, long delayMillis, Runnable forwardAgain) {
		holdFor(acknowledgement, delayMillis, () -> {
			if (acknowledgement.isChannelOpen()) {
				forwardAgain.run();
			}
		});
	}

	private void holdFor(Acknowledgement acknowledgement, long delayMillis, Runnable atEnd) {
		if (this.stopping) {
			acknowledgement.requeue();
			return;
		}
		if (delayMillis <= 0) {
			atEnd.run();
			return;
		}
		this.held.add(acknowledgement);
		try {
			this.executors.schedule(() -> {
				if (this.held.remove(acknowledgement)) {
					atEnd.run();
				}
			}, Duration.ofMillis(delayMillis), this.executors.acks());
		}
		catch (RejectedExecutionException ex) {
			// Stopping: nothing runs any more, so it goes back now.
			requeue(acknowledgement);
		}
		if (this.stopping) {
			// Stopped meanwhile: do not leave it for the closing channel.
			requeue(acknowledgement);
		}
	}

	private void requeue(Acknowledgement acknowledgement) {
		if (this.held.remove(acknowledgement)) {
			acknowledgement.requeue();
		}
	}

	/**
	 * How many messages are held now.
	 * @return the count
	 */
	int size() {
		return this.held.size();
	}

	/**
	 * The application stops: every held message goes back now, and later ones at once.
	 */
	void requeueAllNow() {
		this.stopping = true;
		this.held.forEach(this::requeue);
	}

}
