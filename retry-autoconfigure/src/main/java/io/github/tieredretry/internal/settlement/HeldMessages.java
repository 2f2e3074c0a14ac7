package io.github.tieredretry.internal.settlement;

import java.time.Duration;
import java.util.Collections;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;

import io.github.tieredretry.internal.forwarding.RetryExecutors;

/**
 * Messages held unacknowledged while a pause runs: at its end each one's forward is tried
 * again (the forward failed: the message is not given back to its queue, where a quorum
 * queue would count the return towards its delivery limit), or it goes back to its queue
 * (the wrapper itself failed on it). When a container stops consuming on a channel, that
 * channel's held messages go back at once with {@code basic.nack} (a closing channel
 * would put them back as failed deliveries on RabbitMQ 4.3; a nack is not counted).
 */
public final class HeldMessages {

	private final RetryExecutors executors;

	private final Set<Settlement> held = ConcurrentHashMap.newKeySet();

	private volatile boolean stopping;

	/** Consumer channels whose container stops: their messages are held no more. */
	private final Set<Object> givenBack = Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));

	public HeldMessages(RetryExecutors executors) {
		this.executors = executors;
	}

	/**
	 * Give a message back to its queue after a pause, so that it does not come straight
	 * back.
	 * @param acknowledgement the message's acknowledgement
	 * @param delayMillis the pause
	 */
	void requeueLater(Settlement acknowledgement, long delayMillis) {
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
	void forwardLater(Settlement acknowledgement, long delayMillis, Runnable forwardAgain) {
		holdFor(acknowledgement, delayMillis, () -> {
			if (acknowledgement.isChannelOpen()) {
				forwardAgain.run();
			}
		});
	}

	private void holdFor(Settlement acknowledgement, long delayMillis, Runnable atEnd) {
		if (this.stopping) {
			acknowledgement.leaveToChannel();
			return;
		}
		if (isGivenBack(acknowledgement)) {
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
			leaveToChannel(acknowledgement);
		}
		else if (isGivenBack(acknowledgement)) {
			// Its container stopped meanwhile: do not leave it for the closing channel.
			requeue(acknowledgement);
		}
	}

	/**
	 * Run a task on the ack thread after a delay; at once when the threads are stopping.
	 * @param task the task
	 * @param delay the delay
	 */
	void later(Runnable task, Duration delay) {
		try {
			this.executors.schedule(task, delay, this.executors.acks());
		}
		catch (RejectedExecutionException ex) {
			task.run();
		}
	}

	private void requeue(Settlement acknowledgement) {
		if (this.held.remove(acknowledgement)) {
			acknowledgement.requeue();
		}
	}

	private void leaveToChannel(Settlement acknowledgement) {
		if (this.held.remove(acknowledgement)) {
			acknowledgement.leaveToChannel();
		}
	}

	/**
	 * How many messages are held now.
	 * @return the count
	 */
	int size() {
		return this.held.size();
	}

	private boolean isGivenBack(Settlement acknowledgement) {
		return this.givenBack.contains(acknowledgement.consumer());
	}

	/**
	 * A container stops consuming on a channel: its held messages go back now, and later
	 * ones at once.
	 * @param consumer the real consumer channel, or an AMQP 1.0 listener
	 */
	void giveBack(Object consumer) {
		this.givenBack.add(consumer);
		this.held.forEach((acknowledgement) -> {
			if (acknowledgement.consumer() == consumer) {
				requeue(acknowledgement);
			}
		});
	}

	/**
	 * The application stops: nothing is held or forwarded again any more. Held messages
	 * are left to their consumer channels, which give them back when their containers
	 * stop consuming: given back now, a message could be delivered again to a consumer
	 * that has not stopped yet.
	 */
	public void stopHolding() {
		this.stopping = true;
		this.held.forEach(this::leaveToChannel);
	}

}
