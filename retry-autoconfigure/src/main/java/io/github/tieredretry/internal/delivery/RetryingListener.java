package io.github.tieredretry.internal.delivery;

import java.util.List;
import java.util.function.Consumer;

import com.rabbitmq.client.Channel;
import io.github.tieredretry.internal.settlement.ConsumerChannels;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.core.MessageListener;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;

/**
 * What the wrappers of retryable listeners share, whatever the listener's shape: the
 * listener they wrap, the path every delivery takes ({@link DeliveryOutcomes},
 * {@link RetryRounds}), and the call of the listener with what its method returned.
 * <p>
 * A wrapper acks every message itself: it declares {@linkplain #isAsyncReplies()
 * asynchronous replies}, which makes the container use manual acknowledgements (with its
 * own acks, an ack of a later message would also ack - with {@code multiple} - a failed
 * one whose forward is not confirmed yet).
 */
public abstract class RetryingListener implements ChannelAwareMessageListener {

	/** Calls the wrapped listener. */
	@FunctionalInterface
	interface Invocation {

		void invoke() throws Exception;

	}

	final MessageListener delegate;

	final DeliveryOutcomes outcomes;

	final RetryRounds rounds;

	final ConsumerChannels channels;

	private final @Nullable InvocationCapture invocations;

	RetryingListener(MessageListener delegate, DeliveryOutcomes outcomes, ConsumerChannels channels,
			@Nullable InvocationCapture invocations) {
		this.delegate = delegate;
		this.outcomes = outcomes;
		this.channels = channels;
		this.invocations = invocations;
		this.rounds = new RetryRounds(outcomes, this::callFor);
	}

	/**
	 * The call of the listener for a round of deliveries.
	 * @param round the deliveries
	 * @param channel the channel they arrived on
	 * @return the call
	 */
	abstract ListenerCall callFor(List<Delivery> round, Channel channel);

	/**
	 * Call the listener and follow what its method returned.
	 * @param invocation calls the listener
	 * @param payload told what the listener's method was given, even when it threw
	 * @return its asynchronous result, or {@code null} when it was done when it returned
	 * @throws Exception what the listener threw
	 */
	@Nullable AsyncResult call(Invocation invocation, Consumer<@Nullable Object> payload) throws Exception {
		InvocationCapture capture = this.invocations;
		if (capture != null) {
			capture.clear();
		}
		Object asyncResult = null;
		try {
			invocation.invoke();
		}
		finally {
			InvocationCapture.Invocation invoked = (capture != null) ? capture.take() : null;
			if (invoked != null) {
				payload.accept(invoked.payload());
				asyncResult = invoked.asyncResult();
			}
		}
		return AsyncResult.of(asyncResult);
	}

	/**
	 * The channel, which the container must expose.
	 * @param channel the channel the container passed
	 * @return the channel
	 */
	Channel required(@Nullable Channel channel) {
		if (channel == null) {
			throw new IllegalStateException("Listener " + this.outcomes.listenerName() + " received a delivery "
					+ "without its channel; tiered retries need the container to expose it (exposeListenerChannel)");
		}
		return channel;
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
