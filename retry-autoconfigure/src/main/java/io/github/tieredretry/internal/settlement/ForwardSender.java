package io.github.tieredretry.internal.settlement;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.internal.forwarding.ForwardFailurePause;
import io.github.tieredretry.internal.forwarding.MessageForwarder;
import io.github.tieredretry.internal.forwarding.RetryExecutors;
import io.github.tieredretry.observation.RetryForwardContext;
import io.github.tieredretry.observation.RetryObservations;
import io.micrometer.observation.Observation;

/**
 * Sends one listener's forwards and settles their originals: acked when the broker has
 * confirmed the forward. A forward that failed is tried again after a pause, its original
 * held unacked meanwhile: giving it back to its queue would spend one of its lives on a
 * quorum queue of RabbitMQ 4.0 to 4.2, which counts every return towards its delivery
 * limit, and would invoke the listener again for nothing. Nothing here waits on the
 * consumer thread except {@link #awaitPauses()}.
 * <p>
 * While RabbitMQ blocks publishing (a resource alarm), forwards are held by the publisher
 * until the alarm clears, and their originals stay unacked in the consumer. Each consumer
 * holds at most {@code holdLimit} of them (half its prefetch), so that it keeps room for
 * healthy messages; further failed messages go back to their queue without a forward
 * attempt and are tried again: at once the first time, after a pause when they come back
 * and fail again. A message that the broker has counted a return of already is held
 * anyway (see {@link Settlement#mayRequeue()}).
 */
public final class ForwardSender {

	/**
	 * The pause of failures that are not forwards: the wrapper itself could not handle a
	 * message.
	 */
	public static final String UNEXPECTED_FAILURES = "(unexpected failure)";

	private final MessageForwarder forwarder;

	private final RetryExecutors executors;

	private final RetryNotifications notifications;

	private final Supplier<ForwardFailurePause> pauseFactory;

	private final Duration blockedRequeuePause;

	private final int holdLimit;

	private final HeldMessages heldMessages;

	private final RetryObservations observations;

	/**
	 * One pause per forward target: a parking lot that cannot be reached must keep
	 * slowing its forwards down even while forwards to the tiers succeed.
	 */
	private final Map<String, ForwardFailurePause> pauses = new ConcurrentHashMap<>();

	/** Forwards not yet settled, per consumer channel. */
	private final Map<Object, AtomicInteger> unsettled = new ConcurrentHashMap<>();

	/**
	 * Create a sender.
	 * @param forwarder publishes forwards
	 * @param executors the threads acks and delayed requeues run on
	 * @param notifications logs and events
	 * @param pauseFactory creates a pause per target
	 * @param blockedRequeuePause how long a message held back while the broker blocks
	 * publishing waits before it goes back to its queue
	 * @param holdLimit how many failed messages one consumer holds while the broker
	 * blocks publishing
	 * @param heldMessages where messages wait for their pause to end before they are
	 * forwarded again or go back
	 * @param observations observes forwards
	 */
	public ForwardSender(MessageForwarder forwarder, RetryExecutors executors, RetryNotifications notifications,
			Supplier<ForwardFailurePause> pauseFactory, Duration blockedRequeuePause, int holdLimit,
			HeldMessages heldMessages, RetryObservations observations) {
		this.forwarder = forwarder;
		this.executors = executors;
		this.notifications = notifications;
		this.pauseFactory = pauseFactory;
		this.blockedRequeuePause = blockedRequeuePause;
		this.holdLimit = Math.max(1, holdLimit);
		this.heldMessages = heldMessages;
		this.observations = observations;
	}

	public ForwardFailurePause pause(String target) {
		return this.pauses.computeIfAbsent(target, (name) -> this.pauseFactory.get());
	}

	/**
	 * Slow the calling consumer down while forwards fail: a forward that failed after the
	 * consumer moved on (no confirm, a nack) pauses it from its next message.
	 */
	public void awaitPauses() {
		this.pauses.values().forEach(ForwardFailurePause::awaitPause);
	}

	/**
	 * Start a forward; its original is acked once the broker has confirmed it. Returns at
	 * once.
	 * @param forward the forward
	 * @param acknowledgement the original's acknowledgement
	 */
	public void send(Forward forward, Settlement acknowledgement) {
		Throwable listenerFailure = forward.failure();
		if (listenerFailure != null && this.observations.isEnabled()) {
			this.observations.listenerFailed(listenerFailure);
		}
		Object consumer = acknowledgement.consumer();
		AtomicInteger held = this.unsettled.computeIfAbsent(consumer, (channel) -> new AtomicInteger());
		if (held.incrementAndGet() > this.holdLimit && this.forwarder.isBlocked() && acknowledgement.mayRequeue()) {
			release(consumer, held);
			// Back to its queue and tried again: at once the first time (a transient
			// failure then succeeds without waiting for the alarm), after a pause when it
			// comes back failing (no hot loop).
			boolean triedAgainAlready = Boolean.TRUE.equals(forward.message().getMessageProperties().getRedelivered());
			long pauseMillis = triedAgainAlready ? this.blockedRequeuePause.toMillis() : 0;
			this.notifications.heldBack(forward, pauseMillis);
			if (pauseMillis == 0) {
				acknowledgement.requeue();
			}
			else {
				requeueLater(acknowledgement, pauseMillis);
			}
			return;
		}
		Observation observation = Observation.NOOP;
		AMQP.BasicProperties properties = forward.properties();
		if (this.observations.isEnabled()) {
			// On the consumer thread: the delivery's listener observation is the
			// forward's parent.
			RetryForwardContext context = forward.observationContext();
			observation = this.observations.startForward(context);
			properties = context.publishedProperties();
		}
		publish(forward, properties, acknowledgement, held, observation);
	}

	/**
	 * Retry a message on the broker backend: back to its own queue, for the queue to
	 * deliver it again after the policy's delay ({@code basic.reject} into its delayed
	 * retry; over AMQP 1.0, {@code modified} with a delivery time). Nothing to publish
	 * and no confirm to wait for; observed and reported as a forward.
	 * @param forward the retry, a {@link Forward.BrokerRetry}
	 * @param giveBackWithDelay gives the message back
	 */
	public void retryInItsQueue(Forward forward, Runnable giveBackWithDelay) {
		Throwable listenerFailure = forward.failure();
		Observation observation = Observation.NOOP;
		if (this.observations.isEnabled()) {
			if (listenerFailure != null) {
				this.observations.listenerFailed(listenerFailure);
			}
			observation = this.observations.startForward(forward.observationContext());
		}
		giveBackWithDelay.run();
		RetryObservations.stop(observation, null);
		this.notifications.forwarded(forward);
	}

	private void publish(Forward forward, AMQP.BasicProperties properties, Settlement acknowledgement,
			AtomicInteger held, Observation observation) {
		CompletableFuture<Void> publish;
		try {
			publish = forward.toTier() ? this.forwarder.toTier(forward.queue(), properties, forward.body())
					: this.forwarder.toParkingLot(properties, forward.body());
		}
		catch (RuntimeException ex) {
			publish = CompletableFuture.failedFuture(ex);
		}
		publish.whenComplete((confirmed, failure) -> {
			RetryObservations.stop(observation, failure);
			release(acknowledgement.consumer(), held);
			settleLater(forward, properties, acknowledgement, failure);
		});
	}

	// After a pause, on the acks thread. The properties are those of the first attempt:
	// with tracing, they carry that forward's span, which the next attempt continues.
	private void forwardAgain(Forward forward, AMQP.BasicProperties properties, Settlement acknowledgement) {
		AtomicInteger held = this.unsettled.computeIfAbsent(acknowledgement.consumer(),
				(channel) -> new AtomicInteger());
		held.incrementAndGet();
		publish(forward, properties, acknowledgement, held, Observation.NOOP);
	}

	private void release(Object consumer, AtomicInteger held) {
		if (held.decrementAndGet() <= 0) {
			this.unsettled.remove(consumer, held);
		}
	}

	// Acks may block on the consumer connection: on the ack thread, never on the thread
	// that settled.
	private void settleLater(Forward forward, AMQP.BasicProperties properties, Settlement acknowledgement,
			Throwable failure) {
		try {
			this.executors.acks().execute(() -> settle(forward, properties, acknowledgement, failure));
		}
		catch (RejectedExecutionException ex) {
			// Stopping: a confirmed forward's original is delivered again (a duplicate),
			// a failed one is not lost.
			acknowledgement.requeue();
		}
	}

	private void settle(Forward forward, AMQP.BasicProperties properties, Settlement acknowledgement,
			Throwable failure) {
		ForwardFailurePause pause = pause(forward.target());
		if (failure == null) {
			pause.reset();
			acknowledgement.ack();
			this.notifications.forwarded(forward);
			return;
		}
		Throwable cause = (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
				: failure;
		long pauseMillis = pause.recordFailure();
		try {
			this.notifications.forwardFailed(forward, cause, pauseMillis, pause.consecutiveFailures());
		}
		finally {
			this.heldMessages.forwardLater(acknowledgement, pauseMillis,
					() -> forwardAgain(forward, properties, acknowledgement));
		}
	}

	/**
	 * Give a message back to its queue after a pause, so that it does not come straight
	 * back.
	 * @param acknowledgement the message's acknowledgement
	 * @param delayMillis the pause
	 */
	public void requeueLater(Settlement acknowledgement, long delayMillis) {
		this.heldMessages.requeueLater(acknowledgement, delayMillis);
	}

}
