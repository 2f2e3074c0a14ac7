package io.github.tieredretry.internal.delivery;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import io.github.tieredretry.internal.headers.FailureDetails;
import io.github.tieredretry.internal.headers.HeaderChanges;
import io.github.tieredretry.internal.policy.FailureDecision;
import io.github.tieredretry.internal.policy.RetryDecider;
import io.github.tieredretry.internal.policy.RetryState;
import io.github.tieredretry.internal.settlement.Acknowledgement;
import io.github.tieredretry.internal.settlement.Forward;
import io.github.tieredretry.internal.settlement.ForwardSender;
import io.github.tieredretry.internal.settlement.RetryNotifications;
import io.github.tieredretry.listener.ListenerBackend;
import io.github.tieredretry.listener.ListenerGate;
import io.github.tieredretry.listener.RetryableListenerInfo;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.ImmediateAcknowledgeAmqpException;
import org.springframework.amqp.ImmediateRequeueAmqpException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;

/**
 * What happens to each delivery of one retryable listener, whatever its shape (one
 * message at a time, batches, asynchronous results): its retry state on arrival, the
 * moves made without invoking the listener (a hop, a postponement, a producer-side
 * batch), and after an attempt: processed and acked, retried (through a tier, or in its
 * queue on the broker backend), parked, or held for the breaker's next probe. Every
 * wrapper settles its deliveries through here, so that both backends and every rule on
 * giving messages back hold for every shape.
 */
public final class DeliveryOutcomes {

	/** Header of a batch sent with Spring AMQP's {@code BatchingRabbitTemplate}. */
	static final String BATCH_FORMAT_HEADER = "springBatchFormat";

	private final RetryableListenerInfo info;

	private final String listenerName;

	private final RetryDecider decider;

	private final ListenerRuntime runtime;

	private final ForwardSender sender;

	private final RetryNotifications notifications;

	private final ListenerGate gate;

	private final ListenerBackend backend;

	private final RetryableFailures failures;

	private final RetryWait inATier;

	private final RetryWait inItsQueue;

	public DeliveryOutcomes(RetryableListenerInfo info, RetryDecider decider, ListenerRuntime runtime,
			ForwardSender sender, RetryNotifications notifications, ListenerGate gate, ListenerBackend backend) {
		this.info = info;
		this.listenerName = info.listener();
		this.decider = decider;
		this.runtime = runtime;
		this.sender = sender;
		this.notifications = notifications;
		this.gate = gate;
		this.backend = backend;
		this.failures = new RetryableFailures(info, runtime, decider.policy());
		this.inATier = new RetryWait.InATier(decider, sender);
		this.inItsQueue = new RetryWait.InItsQueue(decider, sender);
	}

	// The one place that asks which backend runs: chosen once the broker's version is
	// known, after the wrapper was installed.
	private RetryWait retryWait() {
		return this.backend.isBroker() ? this.inItsQueue : this.inATier;
	}

	String listenerName() {
		return this.listenerName;
	}

	ListenerGate gate() {
		return this.gate;
	}

	/**
	 * Slow the consumer down while forwards fail; on the consumer thread, before it takes
	 * on a delivery.
	 */
	void awaitPauses() {
		this.sender.awaitPauses();
	}

	/**
	 * The wrapper handled deliveries without a failure of its own: the pause of such
	 * failures ends.
	 */
	void handledNormally() {
		this.sender.pause(ForwardSender.UNEXPECTED_FAILURES).reset();
	}

	/**
	 * What the broker delivered of each message, where the consumer captured it.
	 * @param messages the messages the container hands over
	 * @return what was captured, per message
	 */
	List<DeliveryCapture.@Nullable Received> received(List<Message> messages) {
		return this.runtime.capture().take(messages);
	}

	/**
	 * The attempts of asynchronous listeners.
	 * @return their runtime
	 */
	AsyncAttempts async() {
		return this.runtime.async();
	}

	/**
	 * A delivery as it arrives, on the consumer thread: what the broker delivered, and
	 * its retry state on its queue, which the listener sees as its retry count.
	 * @param message the message the container hands over
	 * @param acknowledgement how it is settled
	 * @param received what the broker delivered, if captured
	 * @return the delivery
	 */
	Delivery arrive(Message message, Acknowledgement acknowledgement, DeliveryCapture.@Nullable Received received) {
		MessageProperties properties = message.getMessageProperties();
		String queue = properties.getConsumerQueue();
		if (queue == null) {
			// Both container types always set it; without it there is no queue to return
			// a retry to.
			throw new IllegalStateException("Listener " + this.listenerName + " received a message without its "
					+ "consumer queue; cannot apply tiered retries");
		}
		RetryState state = retryWait().stateOf(properties, queue, acknowledgement.countedReturns(),
				this.runtime.clock().instant());
		// What the listener sees is the retry state for this queue, not a count copied
		// from elsewhere.
		properties.setRetryCount(state.retries());
		return new Delivery(message, received, queue, state, acknowledgement);
	}

	/**
	 * Move a delivery on without invoking the listener where it must: a producer-side
	 * batch (parked whole), a retry that is not due yet (through a tier again), a message
	 * the broker has counted returns of while the listener is paused (postponed through a
	 * tier).
	 * @param delivery the delivery
	 * @return whether it moved on
	 */
	boolean movedOnBeforeInvoking(Delivery delivery) {
		if (delivery.message().getMessageProperties().getHeaders().containsKey(BATCH_FORMAT_HEADER)) {
			// A producer-side batch shares one delivery and one set of properties between
			// its messages, so none of them could be retried or parked on its own: the
			// batch is parked whole, untouched.
			handleFailure(delivery, new ProducerBatchNotSupportedException(), false);
			return true;
		}
		Duration hopTier = this.decider.tierForEarlyArrival(delivery.state(), this.runtime.clock().instant());
		if (hopTier != null) {
			// Its delay is composed of several tiers: wait again, do not invoke the
			// listener early.
			this.sender.send(delivery.forward(new Forward.Hop(hopTier), Forward.tierQueue(hopTier),
					HeaderChanges.forHop(hopTier)), delivery.acknowledgement());
			return true;
		}
		if (retryWait().countedReturnsAreCostly() && delivery.acknowledgement().countedReturns() > 0
				&& this.gate.isPaused()) {
			postpone(delivery);
			return true;
		}
		return false;
	}

	/**
	 * How many times the listener may be invoked for a delivery before its failure is
	 * retried or parked: once, plus the policy's immediate retries on a first delivery.
	 * @param delivery the delivery
	 * @return the attempts
	 */
	int attemptsFor(Delivery delivery) {
		return delivery.state().isRetry() ? 1 : 1 + this.decider.policy().immediateRetries();
	}

	/**
	 * The listener processed a delivery: it is acked.
	 * @param delivery the delivery
	 * @param took how long the attempt took
	 */
	void processed(Delivery delivery, Duration took) {
		processed(List.of(delivery), took);
	}

	/**
	 * The listener processed deliveries of one call: they are acked, together where
	 * nothing else of their channel is outstanding.
	 * @param deliveries the deliveries, all of one channel
	 * @param took how long the call took
	 */
	void processed(List<Delivery> deliveries, Duration took) {
		List<Acknowledgement> acknowledgements = new ArrayList<>(deliveries.size());
		for (Delivery delivery : deliveries) {
			this.gate.succeeded(took);
			acknowledgements.add(delivery.acknowledgement());
		}
		Acknowledgement.ackAll(acknowledgements);
		for (Delivery delivery : deliveries) {
			if (delivery.state().isRetry()) {
				this.notifications.recovered(delivery.message(), delivery.queue(), delivery.state(),
						this.runtime.clock().instant());
			}
		}
	}

	/**
	 * The listener's last attempt on a delivery failed: it is retried or parked, or, on a
	 * breaker's probe, held for the next probe.
	 * @param delivery the delivery
	 * @param failure what the listener threw, or what its result completed with
	 * @param retryable whether {@link #isRetryable} said the failure may be retried
	 * @param passage how the delivery passed the gate
	 * @param took how long the attempt took
	 * @return whether the delivery is held for the next probe (the caller waits at the
	 * gate again and tries it once more)
	 */
	boolean failed(Delivery delivery, Throwable failure, boolean retryable, ListenerGate.Passage passage,
			Duration took) {
		if (retryable) {
			this.gate.failed(took, failure);
			if (passage == ListenerGate.Passage.PROBE) {
				// Its downstream is still down: no retry spent, nothing parked, and not
				// given back to its queue, where a quorum queue would count the return
				// (RabbitMQ 4.0 to 4.2 drop a message after 20). The consumer holds
				// it for the next probe, unless the broker has counted returns of it.
				if (retryWait().countedReturnsAreCostly() && delivery.acknowledgement().countedReturns() > 0) {
					postpone(delivery);
					return false;
				}
				return true;
			}
		}
		else {
			// A message no retry fixes says nothing about the listener's downstream.
			this.gate.ignored();
		}
		handleFailure(delivery, failure, retryable);
		return false;
	}

	/**
	 * Whether the listener asked the container for an ack or a requeue by throwing: the
	 * starter settles the delivery as asked (see {@link #settleUnhandled}).
	 * @param failure what the listener threw
	 * @return whether it asks
	 */
	static boolean asksContainerToAckOrRequeue(Throwable failure) {
		Throwable cause = ListenerFailures.unwrap(failure);
		return cause instanceof ImmediateAcknowledgeAmqpException || cause instanceof ImmediateRequeueAmqpException;
	}

	/**
	 * Settle a delivery that the retry path did not: as the listener asked
	 * ({@link ImmediateAcknowledgeAmqpException}, {@link ImmediateRequeueAmqpException}),
	 * or, when the wrapper itself failed on it, back to its queue after a pause, never in
	 * a hot loop.
	 * @param message the message
	 * @param acknowledgement its acknowledgement
	 * @param failure what was thrown
	 */
	void settleUnhandled(Message message, Acknowledgement acknowledgement, Throwable failure) {
		// With manual acks the container leaves every outcome to the starter, including
		// the acks and requeues a listener asks for by throwing.
		Throwable cause = ListenerFailures.unwrap(failure);
		if (cause instanceof ImmediateAcknowledgeAmqpException) {
			acknowledgement.ack();
		}
		else if (cause instanceof ImmediateRequeueAmqpException) {
			acknowledgement.requeue();
		}
		else {
			long pauseMillis = this.sender.pause(ForwardSender.UNEXPECTED_FAILURES).recordFailure();
			this.notifications.unexpectedFailure(message, failure, pauseMillis);
			this.sender.requeueLater(acknowledgement, pauseMillis);
		}
	}

	/**
	 * Whether a failure may be retried: never for payload failures and the like, then as
	 * the application's classifiers and the policy say.
	 * @param failure what the listener threw
	 * @return whether to retry it
	 */
	boolean isRetryable(Throwable failure) {
		return this.failures.isRetryable(failure);
	}

	// A paused listener holds its messages in its consumers, and the broker takes them
	// back when a consumer holds one too long (its consumer timeout closes the channel
	// and puts back the messages prefetched with it). It has counted returns of this one,
	// which on a quorum queue spend its delivery limit: it waits in a tier instead of in
	// a consumer, to come back as a new message, with no retry spent.
	private void postpone(Delivery delivery) {
		Duration tier = this.decider.postponementTier();
		Acknowledgement acknowledgement = delivery.acknowledgement();
		this.sender.send(delivery.forward(new Forward.Postpone(tier, acknowledgement.countedReturns()),
				Forward.tierQueue(tier), HeaderChanges.forHop(tier)), acknowledgement);
	}

	private void handleFailure(Delivery delivery, Throwable failure, boolean retryable) {
		Throwable cause = ListenerFailures.unwrap(failure);
		FailureDetails details = this.runtime.headerSettings().describe(cause);
		Instant now = this.runtime.clock().instant();
		FailureDecision decision = this.decider.afterFailure(delivery.state(), retryable, now,
				retryable ? this.failures.retryAfter(cause) : null);
		if (decision instanceof FailureDecision.Retry retry) {
			retryWait().retry(delivery, retry, details, cause);
			return;
		}
		FailureDecision.Park park = (FailureDecision.Park) decision;
		this.sender.send(
				delivery.forward(new Forward.Park(park, details, cause), this.runtime.parkingLot(),
						HeaderChanges.forPark(delivery.queue(), delivery.state().retries(), park, details, now)),
				delivery.acknowledgement());
	}

}
