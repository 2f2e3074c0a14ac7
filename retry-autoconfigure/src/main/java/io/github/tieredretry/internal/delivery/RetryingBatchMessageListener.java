package io.github.tieredretry.internal.delivery;

import java.lang.ref.WeakReference;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;

import com.rabbitmq.client.Channel;
import io.github.tieredretry.internal.settlement.Acknowledgement;
import io.github.tieredretry.internal.settlement.ConsumerChannels;
import io.github.tieredretry.internal.settlement.OutstandingDeliveries;
import io.github.tieredretry.listener.BatchListenerFailedException;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.BatchMessageListener;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageListener;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareBatchMessageListener;

/**
 * Wraps a retryable batch listener ({@code @RabbitListener(batch = "true")}, or a
 * container with {@code consumerBatchEnabled}): each message of a batch is a delivery of
 * its own, acked once processed, and retried or parked on its own when it failed, with
 * its own retry count, headers, tier and parking reason, through the same
 * {@link DeliveryOutcomes} as a listener of single messages.
 * <p>
 * Which messages failed: a {@link BatchListenerFailedException} names them; any other
 * failure fails every message the listener was given. A message that arrives outside a
 * consumer-side batch (a batch listener on a container without consumer batching) is
 * handed to the listener as a batch of one. Spring AMQP's batch adapter settles messages
 * it cannot convert on the channel itself ({@code basic.reject} without requeue, which
 * drops them): the wrapper hands the adapter a channel that keeps those settlements to
 * itself, and parks such messages as not retryable instead.
 */
public final class RetryingBatchMessageListener extends RetryingListener implements ChannelAwareBatchMessageListener {

	/**
	 * The channel Spring AMQP's batch adapter gets, per channel the container exposes
	 * (its settlements kept from the broker and recorded for the call that runs on the
	 * thread).
	 */
	private final Map<Channel, Channel> adapterChannels = Collections.synchronizedMap(new WeakHashMap<>());

	/** What the adapter refused (rejected) in the call running on this thread. */
	private final ThreadLocal<Set<Long>> refusedInCall = new ThreadLocal<>();

	/**
	 * Wrap a batch listener.
	 * @param delegate the listener, a {@link BatchMessageListener} or
	 * {@link ChannelAwareBatchMessageListener}
	 * @param outcomes what happens to its deliveries
	 * @param channels the channels its container consumes on
	 * @param invocations what its adapter's method is given and returns
	 */
	public RetryingBatchMessageListener(MessageListener delegate, DeliveryOutcomes outcomes, ConsumerChannels channels,
			@Nullable InvocationCapture invocations) {
		super(delegate, outcomes, channels, invocations);
	}

	@Override
	public void onMessage(Message message, @Nullable Channel channel) throws Exception {
		// Without consumer-side batching, the container delivers one message at a time.
		onMessageBatch(List.of(message), channel);
	}

	@Override
	public void onMessageBatch(List<Message> messages, @Nullable Channel channel) {
		Channel exposed = required(channel);
		this.outcomes.awaitPauses();
		List<DeliveryCapture.@Nullable Received> received = this.outcomes.received(messages);
		List<Delivery> deliveries = new ArrayList<>(messages.size());
		OutstandingDeliveries unsettled = this.channels.of(exposed);
		for (int i = 0; i < messages.size(); i++) {
			Message message = messages.get(i);
			Acknowledgement acknowledgement = new Acknowledgement(exposed, message, unsettled);
			try {
				Delivery delivery = this.outcomes.arrive(message, acknowledgement, received.get(i));
				if (!this.outcomes.movedOnBeforeInvoking(delivery)) {
					deliveries.add(delivery);
				}
			}
			catch (RuntimeException | StackOverflowError | LinkageError ex) {
				this.outcomes.settleUnhandled(message, acknowledgement, ex);
			}
		}
		try {
			this.rounds.run(deliveries, exposed);
			this.outcomes.handledNormally();
		}
		catch (Throwable ex) {
			if (ex instanceof Error error && ListenerFailures.isFatal(error)) {
				throw error;
			}
			for (Delivery delivery : deliveries) {
				this.outcomes.settleUnhandled(delivery.message(), delivery.acknowledgement(), ex);
			}
		}
	}

	@Override
	ListenerCall callFor(List<Delivery> round, Channel channel) {
		return new BatchCall(round, channel);
	}

	/** One call of the listener with the messages of a round. */
	private final class BatchCall implements ListenerCall {

		private final List<Delivery> round;

		private final Channel channel;

		private final Set<Long> refused = ConcurrentHashMap.newKeySet();

		private @Nullable List<?> payload;

		BatchCall(List<Delivery> round, Channel channel) {
			this.round = round;
			this.channel = channel;
		}

		@Override
		public @Nullable AsyncResult call() throws Exception {
			List<Message> messages = new ArrayList<>(this.round.size());
			this.round.forEach((delivery) -> messages.add(delivery.message()));
			MessageListener listener = RetryingBatchMessageListener.this.delegate;
			return RetryingBatchMessageListener.this.call(() -> {
				if (listener instanceof ChannelAwareBatchMessageListener channelAware) {
					Channel adapterChannel = RetryingBatchMessageListener.this.adapterChannels
						.computeIfAbsent(this.channel, RetryingBatchMessageListener.this::refusalsKept);
					RetryingBatchMessageListener.this.refusedInCall.set(this.refused);
					try {
						channelAware.onMessageBatch(messages, adapterChannel);
					}
					finally {
						RetryingBatchMessageListener.this.refusedInCall.remove();
					}
				}
				else {
					((BatchMessageListener) listener).onMessageBatch(messages);
				}
			}, (payload) -> this.payload = (payload instanceof List<?> list) ? list : null);
		}

		@Override
		public List<Outcome> outcomes(@Nullable Throwable failure) {
			return BatchOutcomes.of(this.round, this.refused, this.payload, failure,
					RetryingBatchMessageListener.this.outcomes.listenerName());
		}

	}

	// The channel Spring AMQP's batch adapter gets: what it settles itself (it rejects
	// messages it cannot convert) is kept from the broker and recorded; the starter
	// settles every delivery. It holds its channel weakly: it is the value of a weak map
	// whose key is that channel.
	private Channel refusalsKept(Channel exposed) {
		WeakReference<Channel> target = new WeakReference<>(exposed);
		return (Channel) Proxy.newProxyInstance(RetryingBatchMessageListener.class.getClassLoader(),
				new Class<?>[] { Channel.class }, (proxy, method, arguments) -> {
					switch (method.getName()) {
						case "basicReject" -> {
							Set<Long> refused = this.refusedInCall.get();
							if (refused != null) {
								refused.add((Long) arguments[0]);
							}
							return null;
						}
						case "basicAck", "basicNack" -> {
							return null;
						}
						default -> {
							Channel channel = target.get();
							if (channel == null) {
								throw new IllegalStateException("The listener's channel is gone");
							}
							try {
								return method.invoke(channel, arguments);
							}
							catch (InvocationTargetException ex) {
								throw ex.getCause();
							}
						}
					}
				});
	}

}
