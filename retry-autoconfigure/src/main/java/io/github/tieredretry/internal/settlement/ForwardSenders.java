package io.github.tieredretry.internal.settlement;

import java.time.Duration;

import io.github.tieredretry.internal.event.RetryEventPublisher;
import io.github.tieredretry.internal.forwarding.ForwardFailurePause;
import io.github.tieredretry.internal.forwarding.MessageForwarder;
import io.github.tieredretry.internal.forwarding.RetryExecutors;
import io.github.tieredretry.observation.RetryObservations;

/**
 * Makes the forwarding path of each retryable listener, whatever its protocol: its
 * notifications and its {@link ForwardSender}, on the forwarder, threads, pauses and held
 * messages that every listener of the application shares; and stops them all.
 */
public final class ForwardSenders {

	private final MessageForwarder forwarder;

	private final RetryExecutors executors;

	private final RetryEventPublisher events;

	private final Duration failureInitialPause;

	private final Duration failureMaxPause;

	private final RetryObservations observations;

	private final HeldMessages heldMessages;

	/**
	 * Create the factory.
	 * @param forwarder forwards to tiers and the parking lot
	 * @param executors the starter's threads
	 * @param events where retry events are published
	 * @param failureInitialPause the pause after a first failed forward (also how long a
	 * message held back while the broker blocks publishing waits before it goes back to
	 * its queue)
	 * @param failureMaxPause the longest pause after consecutive failed forwards
	 * @param observations observes forwards
	 */
	public ForwardSenders(MessageForwarder forwarder, RetryExecutors executors, RetryEventPublisher events,
			Duration failureInitialPause, Duration failureMaxPause, RetryObservations observations) {
		this.forwarder = forwarder;
		this.executors = executors;
		this.events = events;
		this.failureInitialPause = failureInitialPause;
		this.failureMaxPause = failureMaxPause;
		this.observations = observations;
		this.heldMessages = new HeldMessages(executors);
	}

	/**
	 * The logs and events of a listener's outcomes.
	 * @param listener the listener's name
	 * @param maxRetries its policy's retries
	 * @return its notifications
	 */
	public RetryNotifications notificationsFor(String listener, int maxRetries) {
		return new RetryNotifications(listener, maxRetries, this.events);
	}

	/**
	 * A listener's forwarding path.
	 * @param notifications its notifications
	 * @param holdLimit how many failed messages one of its consumers holds while the
	 * broker blocks publishers
	 * @return its sender
	 */
	public ForwardSender senderFor(RetryNotifications notifications, int holdLimit) {
		return new ForwardSender(this.forwarder, this.executors, notifications,
				() -> new ForwardFailurePause(this.failureInitialPause, this.failureMaxPause), this.failureInitialPause,
				holdLimit, this.heldMessages, this.observations);
	}

	/**
	 * Where messages wait for their pause to end before they go back to their queue,
	 * shared by every listener (their consumer channels give them back at shutdown).
	 * @return the held messages
	 */
	public HeldMessages heldMessages() {
		return this.heldMessages;
	}

	/**
	 * The application stops: nothing is held or forwarded again any more, and forwards
	 * held while the broker blocks publishing give up.
	 */
	public void stopping() {
		this.heldMessages.stopHolding();
		this.forwarder.releaseHeld();
	}

}
