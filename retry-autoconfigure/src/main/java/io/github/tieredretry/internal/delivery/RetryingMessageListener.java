package io.github.tieredretry.internal.delivery;

import java.util.List;

import com.rabbitmq.client.Channel;
import io.github.tieredretry.internal.policy.RetryDecider;
import io.github.tieredretry.internal.settlement.Acknowledgement;
import io.github.tieredretry.internal.settlement.ConsumerChannels;
import io.github.tieredretry.internal.settlement.Forward;
import io.github.tieredretry.internal.settlement.ForwardSender;
import io.github.tieredretry.internal.settlement.RetryNotifications;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageListener;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;

/**
 * Wraps a retryable listener that receives one message at a time. Each message ends in
 * exactly one of three places: processed by the listener, waiting in a delay tier (or in
 * its own queue on the broker backend), or parked. A message leaves its queue (is acked)
 * only after the forward that moves it on has been confirmed by the broker; if that
 * forward fails, it is tried again after a pause, the message held unacknowledged
 * meanwhile, and nothing is lost.
 * <p>
 * The path of a failed message: {@link #onMessage} invokes the listener through
 * {@link RetryRounds}; {@link DeliveryOutcomes} asks the {@link RetryDecider} to retry or
 * park it, builds a {@link Forward} and hands it to the {@link ForwardSender}, which
 * publishes it and acks the original on the confirm; {@link RetryNotifications} logs it
 * and publishes its event. A listener that returns a {@code CompletableFuture} or a
 * {@code Mono} (or a Kotlin {@code suspend} function) makes the same attempt, whose
 * outcome is known when its result completes.
 * <p>
 * Forwards are not waited for on the consumer thread: the confirm (a disk write on the
 * broker) takes far longer than processing a healthy message, so the consumer goes on
 * with the next messages and the original is acked when the confirm arrives; this is why
 * the wrapper acks every message itself.
 */
public final class RetryingMessageListener extends RetryingListener {

	/**
	 * Wrap a listener.
	 * @param delegate the listener
	 * @param outcomes what happens to its deliveries
	 * @param channels the channels its container consumes on
	 * @param invocations what its adapter's method returns, for asynchronous listeners
	 */
	public RetryingMessageListener(MessageListener delegate, DeliveryOutcomes outcomes, ConsumerChannels channels,
			@Nullable InvocationCapture invocations) {
		super(delegate, outcomes, channels, invocations);
	}

	@Override
	public void onMessage(Message message, @Nullable Channel channel) throws Exception {
		Channel exposed = required(channel);
		Acknowledgement acknowledgement = new Acknowledgement(exposed, message, this.channels.of(exposed));
		this.outcomes.awaitPauses();
		try {
			Delivery delivery = this.outcomes.arrive(message, acknowledgement,
					this.outcomes.received(List.of(message)).get(0));
			if (!this.outcomes.movedOnBeforeInvoking(delivery)) {
				this.rounds.run(List.of(delivery), exposed);
			}
			this.outcomes.handledNormally();
		}
		catch (Throwable ex) {
			if (ListenerFailures.isFatal(ex)) {
				throw ex;
			}
			this.outcomes.settleUnhandled(message, acknowledgement, ex);
		}
	}

	@Override
	ListenerCall callFor(List<Delivery> round, Channel channel) {
		Message message = round.get(0).message();
		return new ListenerCall() {

			@Override
			public @Nullable AsyncResult call() throws Exception {
				return RetryingMessageListener.this.call(() -> {
					if (RetryingMessageListener.this.delegate instanceof ChannelAwareMessageListener channelAware) {
						channelAware.onMessage(message, channel);
					}
					else {
						RetryingMessageListener.this.delegate.onMessage(message);
					}
				}, (payload) -> {
				});
			}

			@Override
			public List<ListenerCall.Outcome> outcomes(@Nullable Throwable failure) {
				return List
					.of((failure != null) ? ListenerCall.Outcome.failed(failure) : ListenerCall.Outcome.PROCESSED);
			}

		};
	}

}
