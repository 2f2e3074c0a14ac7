package io.github.tieredretry.internal.delayedsend;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Envelope;
import io.github.tieredretry.delayedsend.DelayedSendException;
import io.github.tieredretry.event.MessageParkedEvent;
import io.github.tieredretry.internal.broker.RealChannels;
import io.github.tieredretry.internal.event.RetryEventPublisher;
import io.github.tieredretry.internal.forwarding.ConfirmedPublisher;
import io.github.tieredretry.internal.forwarding.ForwardFailedException;
import io.github.tieredretry.internal.forwarding.MessageForwarder;
import io.github.tieredretry.internal.forwarding.RetryExecutors;
import io.github.tieredretry.policy.ParkedReason;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;
import org.springframework.amqp.rabbit.support.DefaultMessagePropertiesConverter;
import org.springframework.amqp.rabbit.support.MessagePropertiesConverter;

/**
 * The consumer of the scheduled queue, where the tiers return delayed sends: a message
 * that is due goes to its target, one that is not goes on to its next tier, and it is
 * acked only once that publish is confirmed (duplicates are possible, loss is not). A
 * target that does not take it (no such exchange, no queue bound for the routing key)
 * parks it with the reason. A publish that fails otherwise (the broker blocks publishers,
 * no confirm) gives the message back to the scheduled queue after a pause.
 * <p>
 * Internal: public for the starter's auto-configuration only.
 */
public final class ScheduledDeliveries implements ChannelAwareMessageListener {

	private static final Log logger = LogFactory.getLog(ScheduledDeliveries.class);

	/** Where the raw AMQP properties ride along with the converted message. */
	private static final String RAW_PROPERTIES = ScheduledDeliveries.class.getName() + ".raw";

	private final ScheduledHops hops;

	private final ConfirmedPublisher publisher;

	private final MessageForwarder forwarder;

	private final RetryEventPublisher events;

	private final RetryExecutors executors;

	private final Duration pauseAfterFailure;

	/**
	 * Create the consumer.
	 * @param hops moves delayed sends through the tiers
	 * @param publisher publishes a due message to its target
	 * @param forwarder parks what its target did not take
	 * @param events publishes {@link MessageParkedEvent}s
	 * @param executors where acks and delayed requeues run
	 * @param pauseAfterFailure how long a message whose publish failed waits before it is
	 * given back to the scheduled queue
	 */
	public ScheduledDeliveries(ScheduledHops hops, ConfirmedPublisher publisher, MessageForwarder forwarder,
			RetryEventPublisher events, RetryExecutors executors, Duration pauseAfterFailure) {
		this.hops = hops;
		this.publisher = publisher;
		this.forwarder = forwarder;
		this.events = events;
		this.executors = executors;
		this.pauseAfterFailure = pauseAfterFailure;
	}

	/**
	 * The properties converter the scheduled queue's container must use: it keeps the raw
	 * AMQP properties, so that the target gets exactly what was sent (Spring AMQP's
	 * conversion is lossy for republishing).
	 * @return the converter
	 */
	public static MessagePropertiesConverter propertiesConverter() {
		return new DefaultMessagePropertiesConverter() {

			@Override
			public MessageProperties toMessageProperties(AMQP.BasicProperties source, @Nullable Envelope envelope,
					String charset) {
				MessageProperties properties = super.toMessageProperties(source, envelope, charset);
				properties.setHeader(RAW_PROPERTIES, source);
				return properties;
			}

		};
	}

	@Override
	public void onMessage(Message message, @Nullable Channel channel) {
		if (channel == null) {
			throw new IllegalStateException("The scheduled queue's container must expose its channel");
		}
		// Acked on the channel that delivered it, never on a replacement (RealChannels).
		Channel delivering = RealChannels.target(channel);
		long tag = message.getMessageProperties().getDeliveryTag();
		Object raw = message.getMessageProperties().getHeaders().get(RAW_PROPERTIES);
		if (!(raw instanceof AMQP.BasicProperties received)) {
			throw new IllegalStateException("The scheduled queue's container must use "
					+ "ScheduledDeliveries.propertiesConverter(): the raw properties are missing");
		}
		byte[] body = message.getBody();
		this.hops.arrived(received);
		ScheduledProperties.Target target = ScheduledProperties.targetOf(received);
		CompletableFuture<Void> moved;
		if (target == null) {
			moved = park(received, body, "not a delayed send: it has no retry-send-exchange or retry-send-routing-key "
					+ "header (published to the scheduled queue by something other than the starter)");
		}
		else if (!target.isDue(this.hops.clock().instant())) {
			moved = this.hops.forward(received, body, target.due());
		}
		else {
			moved = this.publisher
				.publishAsSent(target.exchange(), target.routingKey(), ScheduledProperties.asSent(received), body)
				.exceptionallyCompose((failure) -> parkIfRefused(received, body, target, cause(failure)));
		}
		moved.whenComplete((done, failure) -> settle(delivering, tag, failure));
	}

	private CompletableFuture<Void> parkIfRefused(AMQP.BasicProperties received, byte[] body,
			ScheduledProperties.Target target, Throwable failure) {
		if (failure instanceof ForwardFailedException refused
				&& (refused.getKind() == ForwardFailedException.Kind.RETURNED
						|| refused.getKind() == ForwardFailedException.Kind.MISSING_EXCHANGE)) {
			String reason = (refused.getKind() == ForwardFailedException.Kind.MISSING_EXCHANGE)
					? "exchange '" + target.exchange() + "' does not exist"
					: "no queue is bound to " + DefaultDelayedSender.describe(target.exchange(), target.routingKey());
			return park(received, body, "the delayed send's target did not take it: " + reason);
		}
		return CompletableFuture.failedFuture(failure);
	}

	private CompletableFuture<Void> park(AMQP.BasicProperties received, byte[] body, String error) {
		Instant now = this.hops.clock().instant();
		String queue = this.hops.scheduledQueue();
		return this.forwarder.toParkingLot(ScheduledProperties.parked(received, queue, error, now), body)
			.thenRun(() -> {
				logger.warn("Parked a delayed send (message-id " + received.getMessageId() + "): " + error);
				this.events.publish(new MessageParkedEvent(queue, 0, ParkedReason.UNROUTABLE,
						DelayedSendException.class.getName(), received.getMessageId()));
			});
	}

	private void settle(Channel channel, long tag, @Nullable Throwable failure) {
		if (failure == null) {
			run(() -> channel.basicAck(tag, false));
			return;
		}
		logger.warn("A delayed send could not be moved on (" + cause(failure).getMessage()
				+ "); it goes back to the scheduled queue in " + this.pauseAfterFailure.toMillis() + " ms");
		try {
			// A pause, not an immediate requeue: the broker that refused this publish
			// would get it again at once, in a hot loop.
			this.executors.schedule(() -> run(() -> channel.basicNack(tag, false, true)), this.pauseAfterFailure,
					this.executors.acks());
		}
		catch (RejectedExecutionException ex) {
			// Stopping: the broker gives it back when the channel closes.
		}
	}

	private static void run(ChannelCall call) {
		try {
			call.run();
		}
		catch (IOException | RuntimeException ex) {
			// The channel died: the broker has put the message back in its queue.
			logger.debug("Could not settle a delayed send on its channel: " + ex.getMessage());
		}
	}

	private static Throwable cause(Throwable failure) {
		return (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause() : failure;
	}

	@FunctionalInterface
	private interface ChannelCall {

		void run() throws IOException;

	}

}
