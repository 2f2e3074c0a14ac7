package io.github.tieredretry.listener;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.regex.Pattern;

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
import org.springframework.amqp.rabbit.connection.ChannelProxy;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;
import org.springframework.amqp.rabbit.support.DefaultMessagePropertiesConverter;
import org.springframework.context.ApplicationEventPublisher;

/**
 * Wraps a retryable listener. Each message ends in exactly one of three places: processed by the
 * listener, waiting in a delay tier, or parked. A message leaves its queue (is acked) only after the
 * forward that moves it on has been confirmed by the broker; if that forward fails, the message goes back
 * to its queue after a pause, and nothing is lost.
 * <p>
 * Forwards are not waited for on the consumer thread: the confirm (a disk write on the broker) takes far
 * longer than processing a healthy message, so the consumer goes on with the next messages and the
 * original is acked when the confirm arrives. This is why the listener acks every message itself: it
 * declares {@linkplain #isAsyncReplies() asynchronous replies}, which makes the container use manual
 * acknowledgements (with its own acks, an ack of a later message would also ack - with {@code multiple}
 * - a failed one whose forward is not confirmed yet).
 */
final class RetryingMessageListener implements ChannelAwareMessageListener {

	private static final Log logger = LogFactory.getLog(RetryingMessageListener.class);

	private static final DefaultMessagePropertiesConverter fallbackConverter = new DefaultMessagePropertiesConverter();

	private final MessageListener delegate;

	private final String listenerName;

	private final RetryDecider decider;

	private final ListenerRuntime runtime;

	/** Header of a batch sent with Spring AMQP's {@code BatchingRabbitTemplate}. */
	private static final String BATCH_FORMAT_HEADER = "springBatchFormat";

	/** A recovered message's exception class comes from a header: only a plausible class name is kept. */
	private static final Pattern CLASS_NAME = Pattern.compile("[\\p{L}_$][\\p{L}\\p{N}_$.]{0,199}");

	private final Supplier<ForwardFailurePause> pauseFactory;

	/**
	 * One pause per forward target: a parking lot that cannot be reached must keep slowing its forwards
	 * down even while forwards to the tiers succeed.
	 */
	private final Map<String, ForwardFailurePause> pauses = new ConcurrentHashMap<>();

	RetryingMessageListener(MessageListener delegate, String listenerName, RetryDecider decider,
			ListenerRuntime runtime, Supplier<ForwardFailurePause> pauseFactory) {
		this.delegate = delegate;
		this.listenerName = listenerName;
		this.decider = decider;
		this.runtime = runtime;
		this.pauseFactory = pauseFactory;
	}

	private ForwardFailurePause pause(String target) {
		return this.pauses.computeIfAbsent(target, (name) -> this.pauseFactory.get());
	}

	@Override
	public void onMessage(Message message, @Nullable Channel channel) throws Exception {
		if (channel == null) {
			throw new IllegalStateException("Listener " + this.listenerName + " received a message without its "
					+ "channel; tiered retries need the container to expose it (exposeListenerChannel)");
		}
		Acknowledgement acknowledgement = new Acknowledgement(channel, message);
		// Forwards that failed after the consumer moved on slow it down from its next message.
		this.pauses.values().forEach(ForwardFailurePause::awaitPause);
		try {
			handle(message, channel, acknowledgement);
		}
		catch (VirtualMachineError error) {
			throw error;
		}
		catch (Throwable ex) {
			// With manual acks the container leaves every outcome to this listener, including the acks and
			// requeues a listener asks for by throwing.
			Throwable cause = unwrap(ex);
			if (cause instanceof ImmediateAcknowledgeAmqpException) {
				acknowledgement.ack();
			}
			else if (cause instanceof ImmediateRequeueAmqpException) {
				acknowledgement.requeue();
			}
			else {
				// Unexpected: back to the queue, but after a pause like a failed forward, never in a hot loop.
				long pauseMillis = pause("(unexpected failure)").recordFailure();
				logQuietly("Listener " + this.listenerName + " could not handle message " + describe(message)
						+ "; it goes back to its queue in " + pauseMillis + " ms", ex);
				requeueLater(acknowledgement, pauseMillis);
			}
		}
	}

	private void handle(Message message, Channel channel, Acknowledgement acknowledgement) throws Exception {
		DeliveryCapture.Received received = this.runtime.capture().take(message);
		MessageProperties properties = message.getMessageProperties();
		String queue = properties.getConsumerQueue();
		if (queue == null) {
			// Both container types always set it; without it there is no queue to return a retry to.
			throw new IllegalStateException("Listener " + this.listenerName + " received a message without its "
					+ "consumer queue; cannot apply tiered retries");
		}
		RetryState state = RetryHeaderValues.readState(properties.getHeaders(), properties.getRetryCount(), queue);
		// What the listener sees is the retry state for this queue, not a count copied from elsewhere.
		properties.setRetryCount(state.retries());
		if (properties.getHeaders().containsKey(BATCH_FORMAT_HEADER)) {
			// A producer-side batch shares one delivery between its messages, so one of them could not be
			// retried or parked on its own: the batch is parked whole, untouched.
			handleFailure(message, received, queue, state, new ProducerBatchNotSupportedException(), acknowledgement);
			return;
		}
		Clock clock = this.runtime.clock();
		Duration hopTier = this.decider.tierForEarlyArrival(state, clock.instant());
		if (hopTier != null) {
			// Its delay is longer than the largest tier: wait again, do not invoke the listener early.
			AMQP.BasicProperties hop = outbound(message, received, HeaderChanges.forHop(hopTier));
			forward(message, queue, state, "",
					() -> this.runtime.forwarder().toTier(queue, hop, body(message, received)),
					RetryTopology.tierQueueName(hopTier), acknowledgement, () -> {
					});
			if (logger.isDebugEnabled()) {
				logger.debug("Message " + describe(message) + " on '" + queue + "' is not due until " + state.due()
						+ "; waiting in tier " + TierLadder.nameOf(hopTier));
			}
			return;
		}
		Throwable failure = invoke(message, channel, state);
		if (failure == null) {
			acknowledgement.ack();
			if (state.isRetry()) {
				recovered(message, queue, state, clock.instant());
			}
			return;
		}
		handleFailure(message, received, queue, state, failure, acknowledgement);
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
		if (NonRetryableFailures.isNeverRetried(failure)) {
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
			RetryState state, Throwable failure, Acknowledgement acknowledgement) {
		Throwable cause = unwrap(failure);
		FailureDetails details = this.runtime.headerSettings().describe(cause);
		Instant now = this.runtime.clock().instant();
		FailureDecision decision = this.decider.afterFailure(state, isRetryable(failure), now);
		if (decision instanceof FailureDecision.Retry retry) {
			AMQP.BasicProperties properties = outbound(message, received, HeaderChanges.forRetry(queue, retry, details));
			forward(message, queue, state, details.exceptionClass(),
					() -> this.runtime.forwarder().toTier(queue, properties, body(message, received)),
					RetryTopology.tierQueueName(retry.tier()), acknowledgement, () -> {
						if (logger.isDebugEnabled()) {
							logger.debug("Listener " + this.listenerName + " failed on message " + describe(message)
									+ " from '" + queue + "' (" + details.exceptionClass() + ": " + details.error()
									+ "); retry " + retry.retryNumber() + " of " + this.decider.policy().maxRetries()
									+ " in " + TierLadder.nameOf(retry.delay()) + " via tier "
									+ TierLadder.nameOf(retry.tier()));
						}
						this.runtime.publish(new RetryScheduledEvent(queue, retry.retryNumber(),
								TierLadder.nameOf(retry.tier()), retry.delay(), retry.due(), details.exceptionClass(),
								properties.getMessageId()));
					});
		}
		else if (decision instanceof FailureDecision.Park park) {
			AMQP.BasicProperties properties = outbound(message, received,
					HeaderChanges.forPark(queue, state.retries(), park, details, now));
			forward(message, queue, state, details.exceptionClass(),
					() -> this.runtime.forwarder().toParkingLot(properties, body(message, received)),
					this.runtime.parkingLot(), acknowledgement, () -> {
						logger.warn("Parked message " + describe(message) + " from '" + queue + "' in '"
								+ this.runtime.parkingLot() + "' (" + park.reason().value() + ", after "
								+ state.retries() + " retries): " + details.exceptionClass() + ": " + details.error());
						this.runtime.publish(new MessageParkedEvent(queue, state.retries(), park.reason(),
								details.exceptionClass(), properties.getMessageId()));
					});
		}
	}

	/**
	 * Start a forward; the original is acked when the broker confirms it. On failure the message must stay
	 * in its queue: it goes back after a pause (no hot redelivery loop), while the consumer goes on with
	 * other messages.
	 */
	private void forward(Message message, String queue, RetryState state, String exception,
			Supplier<CompletableFuture<Void>> publish, String target, Acknowledgement acknowledgement,
			Runnable afterConfirm) {
		CompletableFuture<Void> forward;
		try {
			forward = publish.get();
		}
		catch (ForwardFailedException ex) {
			forward = CompletableFuture.failedFuture(ex);
		}
		ForwardFailurePause pause = pause(target);
		// Acks and events may block: on a follow-up thread, never on the thread that completed the forward.
		forward.whenCompleteAsync((confirmed, completionFailure) -> {
			if (completionFailure == null) {
				pause.reset();
				try {
					// As with a synchronous forward: what follows a confirm happens before the ack.
					afterConfirm.run();
				}
				finally {
					acknowledgement.ack();
				}
				return;
			}
			Throwable failure = (completionFailure instanceof CompletionException
					&& completionFailure.getCause() != null) ? completionFailure.getCause() : completionFailure;
			long pauseMillis = pause.recordFailure();
			try {
				this.runtime.publish(new ForwardFailedEvent(queue, state.retries(), target, exception,
						String.valueOf(failure.getMessage()), message.getMessageProperties().getMessageId()));
				logQuietly("Could not forward message " + describe(message) + " from '" + queue + "' to '" + target
						+ "' (" + failure.getMessage() + "); it goes back to '" + queue + "' after a pause of "
						+ pauseMillis + " ms (" + pause.consecutiveFailures() + " consecutive forward failures)", null);
			}
			finally {
				requeueLater(acknowledgement, pauseMillis);
			}
		}, this.runtime.forwarder().followUps());
	}

	private void requeueLater(Acknowledgement acknowledgement, long delayMillis) {
		try {
			this.runtime.forwarder().schedule(acknowledgement::requeue, delayMillis);
		}
		catch (RejectedExecutionException ex) {
			// Shutting down: give the message back now.
			acknowledgement.requeue();
		}
	}

	private static void logQuietly(String message, @Nullable Throwable failure) {
		try {
			logger.error(message, failure);
		}
		catch (RuntimeException ex) {
			// An exception whose toString() throws must not keep its message from going back to its queue.
			logger.error(message + " (its exception could not be printed: " + ex.getClass().getName() + ")");
		}
	}

	/**
	 * Acks or requeues one delivery on the consumer's channel, once. Called on the consumer thread or, after
	 * a confirm, on a follow-up thread: a single {@code basic.ack} frame is safe to send from another thread
	 * (Spring AMQP acks asynchronous replies the same way).
	 * <p>
	 * It holds the channel that delivered the message, not the container's cached-channel proxy: once its
	 * channel has died, that proxy opens a new one on the next call, and a late ack would then settle
	 * whichever message carries the same delivery tag there (another consumer's, still being processed). On
	 * the dead channel the ack fails instead, and the broker has already put the message back in its queue.
	 */
	private static final class Acknowledgement {

		private final Channel channel;

		private final Message message;

		private final AtomicBoolean done = new AtomicBoolean();

		Acknowledgement(Channel channel, Message message) {
			this.channel = (channel instanceof ChannelProxy proxy) ? proxy.getTargetChannel() : channel;
			this.message = message;
		}

		void ack() {
			if (this.done.compareAndSet(false, true)) {
				try {
					this.channel.basicAck(this.message.getMessageProperties().getDeliveryTag(), false);
				}
				catch (IOException | RuntimeException ex) {
					logger.warn("Could not ack message " + describe(this.message) + " (" + ex.getMessage()
							+ "); the broker will deliver it again");
				}
			}
		}

		void requeue() {
			if (this.done.compareAndSet(false, true)) {
				try {
					this.channel.basicNack(this.message.getMessageProperties().getDeliveryTag(), false, true);
				}
				catch (IOException | RuntimeException ex) {
					logger.warn("Could not requeue message " + describe(this.message) + " (" + ex.getMessage()
							+ "); the broker will deliver it again");
				}
			}
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
		String exceptionClass = (exception != null && CLASS_NAME.matcher(exception.toString()).matches())
				? exception.toString() : "";
		this.runtime.publish(new MessageRecoveredEvent(queue, state.retries(), recoveryTime, exceptionClass,
				message.getMessageProperties().getMessageId()));
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
		// The container acks manually because of this wrapper; for the listener, acks stay automatic.
		this.delegate.containerAckMode(AcknowledgeMode.AUTO);
	}

	@Override
	public boolean isAsyncReplies() {
		return true;
	}

}
