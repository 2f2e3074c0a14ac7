package io.github.tieredretry.internal.delivery;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.amqp.Consumer;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.forwarding.ForwardedProperties;
import io.github.tieredretry.internal.headers.FailureDetails;
import io.github.tieredretry.internal.headers.HeaderChanges;
import io.github.tieredretry.internal.headers.RetryHeaderValues;
import io.github.tieredretry.internal.policy.FailureDecision;
import io.github.tieredretry.internal.policy.RetryDecider;
import io.github.tieredretry.internal.policy.RetryState;
import io.github.tieredretry.internal.settlement.AmqpSettlement;
import io.github.tieredretry.internal.settlement.Forward;
import io.github.tieredretry.internal.settlement.ForwardSender;
import io.github.tieredretry.internal.settlement.RetryNotifications;
import io.github.tieredretry.listener.ListenerBackend;
import io.github.tieredretry.listener.RetryableListenerInfo;
import io.github.tieredretry.policy.EffectiveRetryPolicy;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.ImmediateAcknowledgeAmqpException;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.support.DefaultMessagePropertiesConverter;
import org.springframework.amqp.rabbitmq.client.listener.RabbitAmqpMessageListener;

/**
 * Wraps a retryable listener of Spring AMQP's RabbitMQ AMQP 1.0 client
 * ({@code RabbitAmqpListenerContainer}), which hands every delivery over with its
 * {@link Consumer.Context}: the wrapper settles each one itself. Where the broker holds
 * the retries (RabbitMQ 4.3 or later, a quorum queue), a failed message goes back to its
 * queue with a {@code modified} outcome that carries its delivery time
 * ({@code x-opt-delivery-time}): the queue delivers it again at exactly that time,
 * whatever the policy's delays, jitter included, without republishing it and without
 * counting the return towards the delivery limit; its retry state travels in annotations
 * {@code x-opt-retry-count} and {@code x-opt-retry-first-failure} (the broker takes
 * message annotations from a {@code modified} outcome only under {@code x-} names).
 * Before 4.3, or on another queue type, retries go through the tiers: the message is
 * forwarded with publisher confirms and accepted once the broker confirmed, as for the
 * AMQP 0-9-1 containers. The last failure, and a failure no retry fixes, is parked the
 * same way.
 * <p>
 * It declares asynchronous replies, so that the container leaves settlement to it, and
 * implements {@link RabbitAmqpMessageListener} itself: the container's advice chain
 * proxies only the interfaces of the listener's own class.
 */
public final class AmqpRetryingListener implements RabbitAmqpMessageListener {

	/** The message annotation that asks a quorum queue to hold a returned message. */
	static final String DELIVERY_TIME = "x-opt-delivery-time";

	/** The message annotation with the retries of a message the broker holds. */
	static final String RETRY_COUNT = "x-opt-retry-count";

	/** The message annotation with when a message the broker holds first failed. */
	static final String FIRST_FAILURE = "x-opt-retry-first-failure";

	/** The application properties a delivery's retry state is read from. */
	private static final Set<String> RETRY_STATE_PROPERTIES = Set.of(RetryHeaders.QUEUE, RetryHeaders.FIRST_FAILURE,
			RetryHeaders.DUE, MessageProperties.RETRY_COUNT);

	private static final Log logger = LogFactory.getLog(AmqpRetryingListener.class);

	private static final DefaultMessagePropertiesConverter converter = new DefaultMessagePropertiesConverter();

	private final RabbitAmqpMessageListener delegate;

	private final RetryableListenerInfo info;

	private final String queue;

	private final RetryDecider decider;

	private final ListenerRuntime runtime;

	private final RetryNotifications notifications;

	private final ListenerBackend backend;

	private final RetryableFailures failures;

	private final ForwardSender sender;

	public AmqpRetryingListener(RabbitAmqpMessageListener delegate, RetryableListenerInfo info, String queue,
			RetryDecider decider, ListenerRuntime runtime, RetryNotifications notifications, ListenerBackend backend,
			ForwardSender sender) {
		this.delegate = delegate;
		this.info = info;
		this.queue = queue;
		this.decider = decider;
		this.runtime = runtime;
		this.notifications = notifications;
		this.backend = backend;
		this.failures = new RetryableFailures(info, runtime, decider.policy());
		this.sender = sender;
	}

	@Override
	public void onAmqpMessage(com.rabbitmq.client.amqp.Message amqpMessage, Consumer.@Nullable Context context) {
		if (context == null) {
			throw new IllegalStateException("Listener " + this.info.listener() + " received a message without its "
					+ "context; tiered retries need the container to leave settlement to the listener");
		}
		Instant now = this.runtime.clock().instant();
		RetryState state = stateOf(amqpMessage);
		Duration hopTier = this.decider.tierForEarlyArrival(state, now);
		if (hopTier != null) {
			Received received = received(amqpMessage, state);
			forward(context, received, state, new Forward.Hop(hopTier), Forward.tierQueue(hopTier),
					HeaderChanges.forHop(hopTier));
			return;
		}
		// A retry is converted before the listener runs, since it is shown its retry
		// count, which the copies forwarded from here must not carry; it needs the
		// Spring message either way, failed or recovered. A first delivery is converted
		// only if it fails: most do not.
		Received retry = state.isRetry() ? received(amqpMessage, state) : null;
		AttemptFailure attemptFailure = invoke(amqpMessage, state);
		if (attemptFailure == null) {
			context.accept();
			if (retry != null) {
				this.notifications.recovered(retry.message(), this.queue, state, this.runtime.clock().instant());
			}
			return;
		}
		Throwable failure = attemptFailure.failure();
		if (DeliveryOutcomes.asksContainerToAckOrRequeue(failure)) {
			// Settled as the listener asked, as a container of AMQP 0-9-1 would.
			if (ListenerFailures.unwrap(failure) instanceof ImmediateAcknowledgeAmqpException) {
				context.accept();
			}
			else {
				context.requeue();
			}
			return;
		}
		handleFailure(context, (retry != null) ? retry : received(amqpMessage, state), state, failure,
				attemptFailure.retryable());
	}

	// The retry state: from the annotations where the broker held the last retry, from
	// the retry-* headers (application properties in AMQP 1.0) where a tier did. Reads
	// those alone, as the conversion of all properties would give them.
	private RetryState stateOf(com.rabbitmq.client.amqp.Message amqpMessage) {
		Object retries = amqpMessage.annotation(RETRY_COUNT);
		if (retries instanceof Number count && count.longValue() > 0) {
			Object firstFailure = amqpMessage.annotation(FIRST_FAILURE);
			Instant first = (firstFailure instanceof Number millis) ? Instant.ofEpochMilli(millis.longValue()) : null;
			return new RetryState(count.longValue(), first, null);
		}
		Map<String, Object> headers = AmqpMessageProperties.headers(amqpMessage, RETRY_STATE_PROPERTIES);
		// Spring AMQP takes a numeric retry-count alone, as
		// MessageProperties#getRetryCount.
		long retryCount = (headers.get(MessageProperties.RETRY_COUNT) instanceof Number count) ? count.longValue() : 0;
		return RetryHeaderValues.readState(headers, retryCount, this.queue);
	}

	// All the properties of a delivery, as the forwards and the notifications take them.
	private Received received(com.rabbitmq.client.amqp.Message amqpMessage, RetryState state) {
		AMQP.BasicProperties properties = AmqpMessageProperties.of(amqpMessage);
		MessageProperties messageProperties = converter.toMessageProperties(properties, null, "UTF-8");
		messageProperties.setConsumerQueue(this.queue);
		messageProperties.setRetryCount(state.retries());
		return new Received(properties, new Message(amqpMessage.body(), messageProperties));
	}

	// The listener, with the policy's immediate retries on a first delivery. Returns the
	// last failure, classified once, or null on success.
	private @Nullable AttemptFailure invoke(com.rabbitmq.client.amqp.Message amqpMessage, RetryState state) {
		if (state.isRetry()) {
			// Where the broker held the retry, the count is in an annotation, which the
			// listener does not see.
			amqpMessage.property(MessageProperties.RETRY_COUNT, state.retries());
		}
		int attempts = state.isRetry() ? 1 : 1 + this.decider.policy().immediateRetries();
		AttemptFailure failure = null;
		for (int attempt = 1; attempt <= attempts; attempt++) {
			try {
				this.delegate.onAmqpMessage(amqpMessage, null);
				return null;
			}
			catch (Throwable ex) {
				if (ListenerFailures.isFatal(ex)) {
					throw ex;
				}
				if (DeliveryOutcomes.asksContainerToAckOrRequeue(ex)) {
					return new AttemptFailure(ex, false);
				}
				failure = new AttemptFailure(ex, this.failures.isRetryable(ex));
				if (!failure.retryable()) {
					break;
				}
			}
		}
		return failure;
	}

	private void handleFailure(Consumer.Context context, Received received, RetryState state, Throwable failure,
			boolean retryable) {
		Throwable cause = ListenerFailures.unwrap(failure);
		FailureDetails details = this.runtime.headerSettings().describe(cause);
		Instant now = this.runtime.clock().instant();
		FailureDecision decision = this.decider.afterFailure(state, retryable, now,
				retryable ? this.failures.retryAfter(cause) : null);
		if (decision instanceof FailureDecision.Retry retry && this.backend.isBroker()) {
			Map<String, Object> annotations = new LinkedHashMap<>();
			// Never further ahead than a policy may wait: a delivery time centuries ahead
			// stops the queue for good (RabbitMQ 4.3.6).
			Instant latest = now.plus(EffectiveRetryPolicy.MAX_DURATION);
			annotations.put(DELIVERY_TIME, (retry.due().isAfter(latest) ? latest : retry.due()).toEpochMilli());
			annotations.put(RETRY_COUNT, retry.retryNumber());
			annotations.put(FIRST_FAILURE, retry.firstFailure().toEpochMilli());
			Message message = received.message();
			this.sender
				.retryInItsQueue(
						new Forward(message, this.queue, state, new Forward.BrokerRetry(retry, details, cause),
								this.queue, received.properties(), message.getBody()),
						() -> context.requeue(annotations));
			return;
		}
		if (decision instanceof FailureDecision.Retry retry) {
			forward(context, received, state, new Forward.Retry(retry, details, cause), Forward.tierQueue(retry.tier()),
					HeaderChanges.forRetry(this.queue, retry, details));
			return;
		}
		FailureDecision.Park park = (FailureDecision.Park) decision;
		forward(context, received, state, new Forward.Park(park, details, cause), this.runtime.parkingLot(),
				HeaderChanges.forPark(this.queue, state.retries(), park, details, now));
	}

	// Through the forwarding path of every retryable listener: accepted once the broker
	// confirmed the forward; a refused forward pauses its target and is made again, the
	// message held meanwhile (at most the hold limit while the broker blocks publishers);
	// the forward is observed.
	private void forward(Consumer.Context context, Received received, RetryState state, Forward.Step step,
			String target, HeaderChanges changes) {
		Message message = received.message();
		Forward forward = new Forward(message, this.queue, state, step, target,
				ForwardedProperties.of(received.properties(), changes), message.getBody());
		this.sender.send(forward, new AmqpSettlement(context, this));
	}

	@Override
	public void onMessage(Message message) {
		throw new UnsupportedOperationException("The AMQP 1.0 container calls onAmqpMessage");
	}

	@Override
	public void containerAckMode(AcknowledgeMode mode) {
		// The container settles nothing because of this wrapper; for the listener,
		// settlement stays automatic.
		this.delegate.containerAckMode(AcknowledgeMode.AUTO);
	}

	@Override
	public boolean isAsyncReplies() {
		return true;
	}

	// A delivery's properties as received, and the Spring message made of them.
	private record Received(AMQP.BasicProperties properties, Message message) {

	}

	// What an attempt threw, and whether the policy and the application's classifiers
	// let it be retried (asked once per failure: a classifier may count or log).
	private record AttemptFailure(Throwable failure, boolean retryable) {

	}

}
