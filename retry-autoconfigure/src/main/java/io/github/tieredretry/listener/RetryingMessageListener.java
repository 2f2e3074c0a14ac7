package io.github.tieredretry.listener;

import java.time.Duration;
import java.time.Instant;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import io.github.tieredretry.forwarding.ForwardedProperties;
import io.github.tieredretry.headers.FailureDetails;
import io.github.tieredretry.headers.HeaderChanges;
import io.github.tieredretry.headers.RetryHeaderValues;
import io.github.tieredretry.policy.FailureDecision;
import io.github.tieredretry.policy.RetryDecider;
import io.github.tieredretry.policy.RetryState;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.ImmediateAcknowledgeAmqpException;
import org.springframework.amqp.ImmediateRequeueAmqpException;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageListener;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;
import org.springframework.amqp.rabbit.support.DefaultMessagePropertiesConverter;

/**
 * Wraps a retryable listener. Each message ends in exactly one of three places: processed
 * by the listener, waiting in a delay tier, or parked. A message leaves its queue (is
 * acked) only after the forward that moves it on has been confirmed by the broker; if
 * that forward fails, it is tried again after a pause, the message held unacknowledged
 * meanwhile, and nothing is lost.
 * <p>
 * The path of a failed message: {@link #onMessage} invokes the listener; the
 * {@link RetryDecider} decides retry or park; a {@link Forward} is built and handed to
 * the {@link ForwardSender}, which publishes it and acks the original on the confirm;
 * {@link RetryNotifications} logs it and publishes its event.
 * <p>
 * Forwards are not waited for on the consumer thread: the confirm (a disk write on the
 * broker) takes far longer than processing a healthy message, so the consumer goes on
 * with the next messages and the original is acked when the confirm arrives. This is why
 * the listener acks every message itself: it declares {@linkplain #isAsyncReplies()
 * asynchronous replies}, which makes the container use manual acknowledgements (with its
 * own acks, an ack of a later message would also ack - with {@code multiple} - a failed
 * one whose forward is not confirmed yet).
 */
final class RetryingMessageListener implements ChannelAwareMessageListener {

	private static final Log logger = LogFactory.getLog(RetryingMessageListener.class);

	private static final DefaultMessagePropertiesConverter fallbackConverter = new DefaultMessagePropertiesConverter();

	/** Header of a batch sent with Spring AMQP's {@code BatchingRabbitTemplate}. */
	private static final String BATCH_FORMAT_HEADER = "springBatchFormat";

	private final MessageListener delegate;

	private final RetryableListenerInfo info;

	private final String listenerName;

	private final RetryDecider decider;

	private final ListenerRuntime runtime;

	private final ForwardSender sender;

	private final RetryNotifications notifications;

	private final ListenerGate gate;

	private final ListenerBackend backend;

	private final RetryableFailures failures;

	RetryingMessageListener(MessageListener delegate, RetryableListenerInfo info, RetryDecider decider,
			ListenerRuntime runtime, ForwardSender sender, RetryNotifications notifications, ListenerGate gate,
			ListenerBackend backend) {
		this.delegate = delegate;
		this.info = info;
		this.listenerName = info.listener();
		this.decider = decider;
		this.runtime = runtime;
		this.sender = sender;
		this.notifications = notifications;
		this.gate = gate;
		this.backend = backend;
		this.failures = new RetryableFailures(info, runtime.classifiers(), decider.policy());
	}

	@Override
	public void onMessage(Message message, @Nullable Channel channel) throws Exception {
		if (channel == null) {
			throw new IllegalStateException("Listener " + this.listenerName + " received a message without its "
					+ "channel; tiered retries need the container to expose it (exposeListenerChannel)");
		}
		Acknowledgement acknowledgement = new Acknowledgement(channel, message);
		this.sender.awaitPauses();
		try {
			handle(message, channel, acknowledgement);
			this.sender.pause(ForwardSender.UNEXPECTED_FAILURES).reset();
		}
		catch (Throwable ex) {
			if (ListenerFailures.isFatal(ex)) {
				throw ex;
			}
			// With manual acks the container leaves every outcome to this listener,
			// including the acks and requeues a listener asks for by throwing.
			Throwable cause = ListenerFailures.unwrap(ex);
			if (cause instanceof ImmediateAcknowledgeAmqpException) {
				acknowledgement.ack();
			}
			else if (cause instanceof ImmediateRequeueAmqpException) {
				acknowledgement.requeue();
			}
			else {
				// Unexpected: back to the queue, but after a pause like a failed forward,
				// never in a hot loop.
				long pauseMillis = this.sender.pause(ForwardSender.UNEXPECTED_FAILURES).recordFailure();
				this.notifications.unexpectedFailure(message, ex, pauseMillis);
				this.sender.requeueLater(acknowledgement, pauseMillis);
			}
		}
	}

	private void handle(Message message, Channel channel, Acknowledgement acknowledgement) throws Exception {
		DeliveryCapture.Received received = this.runtime.capture().take(message);
		MessageProperties properties = message.getMessageProperties();
		String queue = properties.getConsumerQueue();
		if (queue == null) {
			// Both container types always set it; without it there is no queue to return
			// a retry to.
			throw new IllegalStateException("Listener " + this.listenerName + " received a message without its "
					+ "consumer queue; cannot apply tiered retries");
		}
		boolean onBroker = this.backend.isBroker();
		// On the broker backend nothing is written into the message: its retries are the
		// broker's count of its failed deliveries.
		RetryState state = onBroker
				? this.decider.brokerHeldState(acknowledgement.countedReturns(), this.runtime.clock().instant())
				: RetryHeaderValues.readState(properties.getHeaders(), properties.getRetryCount(), queue);
		// What the listener sees is the retry state for this queue, not a count copied
		// from elsewhere.
		properties.setRetryCount(state.retries());
		Delivery delivery = new Delivery(message, received, queue, state);
		if (properties.getHeaders().containsKey(BATCH_FORMAT_HEADER)) {
			// A producer-side batch shares one delivery between its messages, so one of
			// them could not be retried or parked on its own: the batch is parked whole,
			// untouched.
			handleFailure(delivery, new ProducerBatchNotSupportedException(), false, acknowledgement);
			return;
		}
		Instant now = this.runtime.clock().instant();
		Duration hopTier = this.decider.tierForEarlyArrival(state, now);
		if (hopTier != null) {
			// Its delay is composed of several tiers: wait again, do not invoke the
			// listener early.
			this.sender.send(delivery.forward(new Forward.Hop(hopTier), Forward.tierQueue(hopTier),
					HeaderChanges.forHop(hopTier)), acknowledgement);
			return;
		}
		if (!onBroker && acknowledgement.countedReturns() > 0 && this.gate.isPaused()) {
			postpone(delivery, acknowledgement);
			return;
		}
		while (true) {
			// While the listener's circuit breaker is open its consumers wait here,
			// holding this message.
			ListenerGate.Passage passage = this.gate.awaitPassage();
			if (passage == ListenerGate.Passage.STOPPED) {
				acknowledgement.requeue();
				return;
			}
			if (!acknowledgement.isChannelOpen()) {
				// The broker took it back while it waited (a consumer timeout, a lost
				// connection) and delivers it again: processing it here would be a
				// duplicate.
				this.gate.ignored();
				return;
			}
			long started = System.nanoTime();
			Throwable failure;
			try {
				failure = invoke(message, channel, state);
			}
			catch (Throwable ex) {
				this.gate.ignored();
				throw ex;
			}
			Duration took = Duration.ofNanos(System.nanoTime() - started);
			if (failure == null) {
				this.gate.succeeded(took);
				acknowledgement.ack();
				if (state.isRetry()) {
					this.notifications.recovered(message, queue, state, this.runtime.clock().instant());
				}
				return;
			}
			boolean retryable = this.failures.isRetryable(failure);
			if (retryable) {
				this.gate.failed(took, failure);
				if (passage == ListenerGate.Passage.PROBE) {
					// Its downstream is still down: no retry spent, nothing parked, and
					// not given back to its queue, where a quorum queue would count the
					// return (RabbitMQ 4.0 to 4.2 drop a message after 20). The consumer
					// holds it for the next probe, unless the broker has counted returns
					// of it.
					if (!onBroker && acknowledgement.countedReturns() > 0) {
						postpone(delivery, acknowledgement);
						return;
					}
					continue;
				}
			}
			else {
				// A message no retry fixes says nothing about the listener's downstream.
				this.gate.ignored();
			}
			handleFailure(delivery, failure, retryable, acknowledgement);
			return;
		}
	}

	// A paused listener holds its messages in its consumers, and the broker takes them
	// back when a consumer holds one too long (its consumer timeout closes the channel
	// and puts back the messages prefetched with it). It has counted returns of this one,
	// which on a quorum queue spend its delivery limit: it waits in a tier instead of in
	// a consumer, to come back as a new message, with no retry spent.
	private void postpone(Delivery delivery, Acknowledgement acknowledgement) {
		Duration tier = this.decider.postponementTier();
		this.sender.send(delivery.forward(new Forward.Postpone(tier, acknowledgement.countedReturns()),
				Forward.tierQueue(tier), HeaderChanges.forHop(tier)), acknowledgement);
	}

	// Invoke the listener, with the policy's immediate retries on a first delivery.
	// Returns last failure, or null on success
	private @Nullable Throwable invoke(Message message, @Nullable Channel channel, RetryState state) throws Exception {
		int attempts = state.isRetry() ? 1 : 1 + this.decider.policy().immediateRetries();
		Throwable failure = null;
		for (int attempt = 1; attempt <= attempts; attempt++) {
			try {
				if (this.delegate instanceof ChannelAwareMessageListener channelAware) {
					channelAware.onMessage(message, channel);
				}
				else {
					this.delegate.onMessage(message);
				}
				return null;
			}
			catch (Throwable ex) {
				if (ListenerFailures.isFatal(ex) || asksContainerToAckOrRequeue(ex)) {
					// The JVM is in trouble, or the listener asked the container
					// explicitly (the adapter wraps it).
					throw ex;
				}
				// Any other Error (a StackOverflowError, say) is the listener's bug in
				// this message: retried and parked like an exception, never allowed to
				// stop the queue's consumer.
				failure = ex;
				if (!this.failures.isRetryable(ex)) {
					break;
				}
			}
		}
		return failure;
	}

	private void handleFailure(Delivery delivery, Throwable failure, boolean retryable,
			Acknowledgement acknowledgement) {
		Throwable cause = ListenerFailures.unwrap(failure);
		FailureDetails details = this.runtime.headerSettings().describe(cause);
		Instant now = this.runtime.clock().instant();
		FailureDecision decision = this.decider.afterFailure(delivery.state(), retryable, now);
		Forward forward;
		if (decision instanceof FailureDecision.Retry retry && this.backend.isBroker()) {
			// Back to its own queue, whose delayed retry holds it for the policy's delay.
			this.sender.retryInItsQueue(delivery.forward(new Forward.BrokerRetry(retry, details, cause),
					delivery.queue(), HeaderChanges.forRetry(delivery.queue(), retry, details)), acknowledgement);
			return;
		}
		if (decision instanceof FailureDecision.Retry retry) {
			forward = delivery.forward(new Forward.Retry(retry, details, cause), Forward.tierQueue(retry.tier()),
					HeaderChanges.forRetry(delivery.queue(), retry, details));
		}
		else {
			FailureDecision.Park park = (FailureDecision.Park) decision;
			forward = delivery.forward(new Forward.Park(park, details, cause), this.runtime.parkingLot(),
					HeaderChanges.forPark(delivery.queue(), delivery.state().retries(), park, details, now));
		}
		this.sender.send(forward, acknowledgement);
	}

	/**
	 * A delivery as the wrapper sees it.
	 *
	 * @param message what the listener received
	 * @param received what the broker delivered, if captured
	 * @param queue the queue it was consumed from
	 * @param state its retry state on this queue
	 */
	private record Delivery(Message message, DeliveryCapture.@Nullable Received received, String queue,
			RetryState state) {

		Forward forward(Forward.Step step, String target, HeaderChanges changes) {
			AMQP.BasicProperties original = (this.received != null) ? this.received.raw()
					: fallbackConverter.fromMessageProperties(this.message.getMessageProperties(), "UTF-8");
			byte[] capturedBody = (this.received != null) ? this.received.body() : null;
			// The body as the broker delivered it, before after-receive post-processing
			// (decompression, say).
			byte[] body = (capturedBody != null) ? capturedBody : this.message.getBody();
			return new Forward(this.message, this.queue, this.state, step, target,
					ForwardedProperties.of(original, changes), body);
		}

	}

	private static boolean asksContainerToAckOrRequeue(Throwable failure) {
		Throwable cause = ListenerFailures.unwrap(failure);
		return cause instanceof ImmediateAcknowledgeAmqpException || cause instanceof ImmediateRequeueAmqpException;
	}

	@Override
	public void containerAckMode(AcknowledgeMode mode) {
		// The container acks manually because of this wrapper; for the listener, acks
		// stay automatic.
		this.delegate.containerAckMode(AcknowledgeMode.AUTO);
	}

	@Override
	public boolean isAsyncReplies() {
		return true;
	}

}
