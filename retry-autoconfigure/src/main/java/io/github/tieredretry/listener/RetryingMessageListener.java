package io.github.tieredretry.listener;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import io.github.tieredretry.event.ForwardFailedEvent;
import io.github.tieredretry.event.MessageParkedEvent;
import io.github.tieredretry.event.MessageRecoveredEvent;
import io.github.tieredretry.event.RetryScheduledEvent;
import io.github.tieredretry.forwarding.ForwardFailedException;
import io.github.tieredretry.forwarding.ForwardFailurePause;
import io.github.tieredretry.forwarding.ForwardedProperties;
import io.github.tieredretry.forwarding.MessageForwarder;
import io.github.tieredretry.headers.FailureDetails;
import io.github.tieredretry.headers.HeaderChanges;
import io.github.tieredretry.headers.RetryHeaderValues;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.policy.FailureDecision;
import io.github.tieredretry.policy.RetryDecider;
import io.github.tieredretry.policy.RetryState;
import io.github.tieredretry.policy.TierLadder;
import io.github.tieredretry.topology.RetryTopology;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.ImmediateAcknowledgeAmqpException;
import org.springframework.amqp.ImmediateRequeueAmqpException;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageListener;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.listener.ListenerExecutionFailedException;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;
import org.springframework.amqp.rabbit.support.DefaultMessagePropertiesConverter;
import org.springframework.context.ApplicationEventPublisher;

/**
 * Wraps a retryable listener. Each message ends in exactly one of three places: processed by the
 * listener, waiting in a delay tier, or parked. A message leaves its queue (is acked by the container)
 * only after the forward that moves it on has been confirmed by the broker; if that forward fails, the
 * message goes back to its queue after a pause, and nothing is lost.
 */
final class RetryingMessageListener implements ChannelAwareMessageListener {

	private static final Log logger = LogFactory.getLog(RetryingMessageListener.class);

	private static final DefaultMessagePropertiesConverter fallbackConverter = new DefaultMessagePropertiesConverter();

	private final MessageListener delegate;

	private final String listenerName;

	private final RetryDecider decider;

	private final ListenerRuntime runtime;

	private final ForwardFailurePause pause;

	RetryingMessageListener(MessageListener delegate, String listenerName, RetryDecider decider,
			ListenerRuntime runtime, ForwardFailurePause pause) {
		this.delegate = delegate;
		this.listenerName = listenerName;
		this.decider = decider;
		this.runtime = runtime;
		this.pause = pause;
	}

	@Override
	public void onMessage(Message message, @Nullable Channel channel) throws Exception {
		DeliveryCapture.Received received = this.runtime.capture().take(message);
		MessageProperties properties = message.getMessageProperties();
		String queue = properties.getConsumerQueue();
		if (queue == null) {
			// Both container types always set it; without it there is no queue to return a retry to.
			throw new IllegalStateException("Listener " + this.listenerName + " received a message without its "
					+ "consumer queue; cannot apply tiered retries");
		}
		RetryState state = RetryHeaderValues.readState(properties.getHeaders(), properties.getRetryCount(), queue);
		Clock clock = this.runtime.clock();
		Duration hopTier = this.decider.tierForEarlyArrival(state, clock.instant());
		if (hopTier != null) {
			// Its delay is longer than the largest tier: wait again, do not invoke the listener early.
			forward(message, received, queue, state, "", () -> this.runtime.forwarder()
				.toTier(queue, outbound(message, received, HeaderChanges.forHop(hopTier)), body(message, received)),
					RetryTopology.tierQueueName(hopTier));
			if (logger.isDebugEnabled()) {
				logger.debug("Message " + describe(message) + " on '" + queue + "' is not due until " + state.due()
						+ "; waiting in tier " + TierLadder.nameOf(hopTier));
			}
			return;
		}
		Throwable failure = invoke(message, channel, state);
		if (failure == null) {
			if (state.isRetry()) {
				recovered(message, queue, state, clock.instant());
			}
			return;
		}
		handleFailure(message, received, queue, state, failure);
	}

	/**
	 * Invoke the listener, with the policy's immediate retries on a first delivery.
	 * @return the last failure, or {@code null} on success
	 */
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
			catch (VirtualMachineError error) {
				throw error;
			}
			catch (Throwable ex) {
				if (asksContainerToAckOrRequeue(ex)) {
					// The listener asked the container for this explicitly (the adapter wraps it).
					throw ex;
				}
				failure = ex;
				if (!isRetryable(ex)) {
					break;
				}
			}
		}
		return failure;
	}

	private boolean isRetryable(Throwable failure) {
		if (NonRetryableFailures.isPayloadFailure(failure)) {
			return false;
		}
		if (NonRetryableFailures.hasCyclicCauseChain(failure)) {
			// Classifying it would never return; retrying an exception this broken is unlikely to help.
			logger.warn("Listener " + this.listenerName + " threw an exception whose cause chain is cyclic; "
					+ "treating it as not retryable");
			return false;
		}
		return this.decider.policy().isRetryable(unwrap(failure));
	}

	private void handleFailure(Message message, DeliveryCapture.@Nullable Received received, String queue,
			RetryState state, Throwable failure) {
		Throwable cause = unwrap(failure);
		FailureDetails details = this.runtime.headerSettings().describe(cause);
		Instant now = this.runtime.clock().instant();
		FailureDecision decision = this.decider.afterFailure(state, isRetryable(failure), now);
		if (decision instanceof FailureDecision.Retry retry) {
			AMQP.BasicProperties properties = outbound(message, received, HeaderChanges.forRetry(queue, retry, details));
			forward(message, received, queue, state, details.exceptionClass(),
					() -> this.runtime.forwarder().toTier(queue, properties, body(message, received)),
					RetryTopology.tierQueueName(retry.tier()));
			if (logger.isDebugEnabled()) {
				logger.debug("Listener " + this.listenerName + " failed on message " + describe(message) + " from '"
						+ queue + "' (" + details.exceptionClass() + ": " + details.error() + "); retry "
						+ retry.retryNumber() + " of " + this.decider.policy().maxRetries() + " in "
						+ TierLadder.nameOf(retry.delay()) + " via tier " + TierLadder.nameOf(retry.tier()));
			}
			this.runtime.publish(new RetryScheduledEvent(queue, retry.retryNumber(), TierLadder.nameOf(retry.tier()),
					retry.delay(), retry.due(), details.exceptionClass(), properties.getMessageId()));
		}
		else if (decision instanceof FailureDecision.Park park) {
			AMQP.BasicProperties properties = outbound(message, received,
					HeaderChanges.forPark(queue, state.retries(), park, details, now));
			forward(message, received, queue, state, details.exceptionClass(),
					() -> this.runtime.forwarder().toParkingLot(properties, body(message, received)),
					this.runtime.parkingLot());
			logger.warn("Parked message " + describe(message) + " from '" + queue + "' in '"
					+ this.runtime.parkingLot() + "' (" + park.reason().value() + ", after " + state.retries()
					+ " retries): " + details.exceptionClass() + ": " + details.error());
			this.runtime.publish(new MessageParkedEvent(queue, state.retries(), park.reason(),
					details.exceptionClass(), properties.getMessageId()));
		}
	}

	/**
	 * Run a forward. On failure the message must stay in its queue: pause (no hot redelivery loop), then
	 * make the container requeue it whatever its {@code defaultRequeueRejected} says.
	 */
	private void forward(Message message, DeliveryCapture.@Nullable Received received, String queue,
			RetryState state, String exception, Runnable publish, String target) {
		try {
			publish.run();
			this.pause.reset();
		}
		catch (ForwardFailedException ex) {
			this.runtime.publish(new ForwardFailedEvent(queue, state.retries(), target, exception, ex.getMessage(),
					message.getMessageProperties().getMessageId()));
			ForwardFailurePause pause = this.pause;
			long pausedFor = pause.pauseAfterFailure();
			logger.error("Could not forward message " + describe(message) + " from '" + queue + "' to '" + target
					+ "' (" + ex.getMessage() + "); it goes back to '" + queue + "' after a pause of " + pausedFor
					+ " ms (" + pause.consecutiveFailures() + " consecutive forward failures)");
			// The forward failure, not the listener's exception, is the cause: a conversion failure in
			// the chain would make the container's error handler reject (drop) the message.
			throw new ImmediateRequeueAmqpException("Forward to '" + target + "' failed; message requeued", ex);
		}
	}

	private void recovered(Message message, String queue, RetryState state, Instant now) {
		Instant firstFailure = state.firstFailure();
		Duration recoveryTime = (firstFailure != null && !firstFailure.isAfter(now))
				? Duration.between(firstFailure, now) : Duration.ZERO;
		Object exception = message.getMessageProperties().getHeaders().get(RetryHeaders.EXCEPTION);
		if (logger.isDebugEnabled()) {
			logger.debug("Message " + describe(message) + " on '" + queue + "' recovered on retry " + state.retries()
					+ ", " + recoveryTime.toMillis() + " ms after its first failure");
		}
		this.runtime.publish(new MessageRecoveredEvent(queue, state.retries(), recoveryTime,
				(exception != null) ? exception.toString() : "", message.getMessageProperties().getMessageId()));
	}

	private static AMQP.BasicProperties outbound(Message message, DeliveryCapture.@Nullable Received received,
			HeaderChanges changes) {
		AMQP.BasicProperties original = (received != null) ? received.raw() : convertedProperties(message);
		return ForwardedProperties.of(original, changes);
	}

	private static AMQP.BasicProperties convertedProperties(Message message) {
		// Fallback when the raw delivery was not captured (debatched fragment, replaced properties).
		MessageProperties properties = message.getMessageProperties();
		return fallbackConverter.fromMessageProperties(properties, "UTF-8");
	}

	private static byte[] body(Message message, DeliveryCapture.@Nullable Received received) {
		byte[] original = (received != null) ? received.body() : null;
		return (original != null) ? original : message.getBody();
	}

	private static boolean asksContainerToAckOrRequeue(Throwable failure) {
		Throwable cause = unwrap(failure);
		return cause instanceof ImmediateAcknowledgeAmqpException || cause instanceof ImmediateRequeueAmqpException;
	}

	static Throwable unwrap(Throwable failure) {
		Throwable current = failure;
		while (current instanceof ListenerExecutionFailedException && current.getCause() != null
				&& current.getCause() != current) {
			current = current.getCause();
		}
		return current;
	}

	private static String describe(Message message) {
		String id = message.getMessageProperties().getMessageId();
		return (id != null) ? "'" + id + "'" : "(no message-id, delivery tag "
				+ message.getMessageProperties().getDeliveryTag() + ")";
	}

	@Override
	public void containerAckMode(AcknowledgeMode mode) {
		this.delegate.containerAckMode(mode);
	}

	@Override
	public boolean isAsyncReplies() {
		return this.delegate.isAsyncReplies();
	}

	MessageListener delegate() {
		return this.delegate;
	}

}
