package io.github.tieredretry.internal.forwarding;

import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmListener;
import com.rabbitmq.client.ReturnListener;
import com.rabbitmq.client.ShutdownListener;
import com.rabbitmq.client.ShutdownSignalException;
import io.github.tieredretry.internal.broker.RealChannels;
import org.jspecify.annotations.Nullable;

/**
 * One publish of a {@link ConfirmedPublisher}: its confirm timeout and its one settlement
 * (confirm, nack, return, channel close or timeout). A forward goes out on a
 * {@link ForwardChannel} it shares with other forwards; a publish whose caller waits for
 * it, or that goes to an exchange the application names, on a channel of its own until it
 * is settled, with listeners of its own.
 */
final class Publication implements ConfirmListener, ReturnListener, ShutdownListener {

	private final ConfirmedPublisher publisher;

	private final String exchange;

	private final String routingKey;

	private final AMQP.BasicProperties properties;

	private final byte[] body;

	/**
	 * Whether a blocked broker fails this publish (its caller waits) rather than holding
	 * it.
	 */
	private final boolean failIfBlocked;

	/**
	 * Whether the properties go out as given, {@code CC} and {@code BCC} included (a
	 * delayed send reaching its target), rather than without extra routing keys.
	 */
	private final boolean asSent;

	private final CompletableFuture<Void> result = new CompletableFuture<>();

	private final AtomicBoolean settled = new AtomicBoolean();

	/**
	 * The cached channel as checked out, to give back; every call goes to
	 * {@link #target}.
	 */
	private @Nullable Channel channel;

	private @Nullable Channel target;

	/**
	 * The shared channel a forward goes out on; set before anything can fail it, so that
	 * its settlement counts it as settled on the publisher.
	 */
	private volatile @Nullable ForwardChannel forwardChannel;

	private volatile long sequenceNumber;

	private volatile @Nullable String returned;

	private volatile @Nullable ScheduledFuture<?> timeout;

	Publication(ConfirmedPublisher publisher, String exchange, String routingKey, AMQP.BasicProperties properties,
			byte[] body, boolean failIfBlocked) {
		this(publisher, exchange, routingKey, properties, body, failIfBlocked, false);
	}

	Publication(ConfirmedPublisher publisher, String exchange, String routingKey, AMQP.BasicProperties properties,
			byte[] body, boolean failIfBlocked, boolean asSent) {
		this.publisher = publisher;
		this.exchange = exchange;
		this.routingKey = routingKey;
		this.properties = properties;
		this.body = body;
		this.failIfBlocked = failIfBlocked;
		this.asSent = asSent;
	}

	/**
	 * The publish's future: completes on the confirm, fails with a
	 * {@link ForwardFailedException}.
	 * @return the future
	 */
	CompletableFuture<Void> result() {
		return this.result;
	}

	/**
	 * Whether a blocked broker fails this publish rather than holding it.
	 * @return whether its caller waits for it
	 */
	boolean failIfBlocked() {
		return this.failIfBlocked;
	}

	/**
	 * Whether it shares a confirm channel with other forwards: a forward to the starter's
	 * own exchanges that nobody waits for. A publish whose caller waits, or that goes to
	 * an exchange the application names (which may not exist and then closes its
	 * channel), takes a channel of its own.
	 * @return whether it goes out on a {@link ForwardChannel}
	 */
	boolean sharesAChannel() {
		return !this.failIfBlocked && !this.asSent;
	}

	/**
	 * On the publisher thread: publish on a channel shared with other forwards.
	 * @param channel the channel
	 */
	void publishOn(ForwardChannel channel) {
		this.forwardChannel = channel;
		try {
			scheduleTimeout();
			AMQP.BasicProperties publishable = ForwardedProperties.publishable(this.properties,
					this.publisher.username(), this.body.length, channel.frameMax());
			channel.publish(this, this.exchange, this.routingKey, publishable, this.body);
		}
		catch (RuntimeException ex) {
			settle(failure(ConfirmedPublisher.errorKind(ex), ex.getMessage(), ex));
		}
	}

	/**
	 * Called by the shared channel right before the publish goes out.
	 * @param sequenceNumber the publish's sequence number on it
	 */
	void sentAs(long sequenceNumber) {
		this.sequenceNumber = sequenceNumber;
	}

	/**
	 * The broker confirmed (ack) or refused (nack) this forward on its shared channel.
	 * @param ack whether it was an ack
	 */
	void confirmed(boolean ack) {
		if (!ack) {
			settle(failure(ForwardFailedException.Kind.NACKED, "nacked by the broker", null));
			return;
		}
		String unroutable = this.returned;
		settle((unroutable != null) ? new ForwardFailedException(ForwardFailedException.Kind.RETURNED,
				"Broker returned the message published to " + describe() + ": " + unroutable) : null);
	}

	/**
	 * Whether a return on its shared channel is this forward's, and if so, remember it
	 * until the confirm that follows.
	 * @param exchange the exchange of the returned message
	 * @param routingKey its routing key
	 * @param body its body
	 * @param reply the reply code and text
	 * @return whether it was taken as this forward's return
	 */
	boolean returnedAs(String exchange, String routingKey, byte[] body, String reply) {
		if (this.returned != null || !this.exchange.equals(exchange) || !this.routingKey.equals(routingKey)
				|| !Arrays.equals(body, this.body)) {
			return false;
		}
		this.returned = reply;
		return true;
	}

	/**
	 * Its shared channel died before it was confirmed. Only a forward to the exchange
	 * whose absence closed the channel fails as a missing exchange; the others fail as a
	 * publish error, to be forwarded again.
	 * @param reason why the channel died
	 */
	void channelDied(@Nullable Throwable reason) {
		AMQP.Channel.Close notFound = ConfirmedPublisher.notFoundClose(reason);
		ForwardFailedException.Kind kind = (notFound != null && notFound.getReplyText() != null
				&& notFound.getReplyText().contains("no exchange '" + this.exchange + "'"))
						? ForwardFailedException.Kind.MISSING_EXCHANGE : ForwardFailedException.Kind.PUBLISH_ERROR;
		String problem = (reason != null) ? "channel closed: " + reason.getMessage() : "channel closed";
		settle(failure(kind, problem, reason));
	}

	/**
	 * On the publisher thread, holding a channel slot.
	 * @param cachedChannel the slot's channel
	 */
	void publishOn(Channel cachedChannel) {
		Channel real = RealChannels.target(cachedChannel);
		this.channel = cachedChannel;
		this.target = real;
		try {
			real.addReturnListener(this);
			real.addConfirmListener(this);
			real.addShutdownListener(this);
			scheduleTimeout();
			AMQP.BasicProperties publishable = this.asSent ? this.properties : ForwardedProperties.publishable(
					this.properties, this.publisher.username(), this.body.length, real.getConnection().getFrameMax());
			this.sequenceNumber = real.getNextPublishSeqNo();
			real.basicPublish(this.exchange, this.routingKey, true, publishable, this.body);
			if (!real.isOpen()) {
				// Closed between the listeners and the publish: the shutdown listener
				// may have run before this publish existed.
				settle(failure(closeReason(real)));
			}
		}
		catch (IOException | RuntimeException ex) {
			settle(failure(ConfirmedPublisher.errorKind(ex), ex.getMessage(), ex));
		}
	}

	private void scheduleTimeout() {
		try {
			this.timeout = this.publisher.executors()
				.schedule(this::timedOut, this.publisher.confirmTimeout(), Runnable::run);
		}
		catch (RejectedExecutionException ex) {
			throw new IllegalStateException("the publisher is closed", ex);
		}
	}

	private void timedOut() {
		if (this.publisher.isBlocked() && !this.publisher.isClosed()) {
			// The broker does not read the connection until its alarm clears: the
			// confirm is late, not lost.
			scheduleTimeout();
			return;
		}
		settle(failure(ForwardFailedException.Kind.TIMEOUT,
				"no confirm within " + this.publisher.confirmTimeout().toMillis() + " ms", null));
	}

	@Override
	public void handleReturn(int replyCode, String replyText, String exchange, String routingKey,
			AMQP.BasicProperties properties, byte[] body) {
		// The broker sends a return before the confirm of the same publish.
		this.returned = replyCode + " " + replyText;
	}

	@Override
	public void handleAck(long deliveryTag, boolean multiple) {
		if (isForThisPublish(deliveryTag, multiple)) {
			String unroutable = this.returned;
			settle((unroutable != null) ? new ForwardFailedException(ForwardFailedException.Kind.RETURNED,
					"Broker returned the message published to " + describe() + ": " + unroutable) : null);
		}
	}

	@Override
	public void handleNack(long deliveryTag, boolean multiple) {
		if (isForThisPublish(deliveryTag, multiple)) {
			settle(failure(ForwardFailedException.Kind.NACKED, "nacked by the broker", null));
		}
	}

	private boolean isForThisPublish(long deliveryTag, boolean multiple) {
		return deliveryTag == this.sequenceNumber || (multiple && deliveryTag > this.sequenceNumber);
	}

	@Override
	public void shutdownCompleted(ShutdownSignalException cause) {
		// A missing exchange (404), a refused message (406), lost access or
		// connection: no confirm will come.
		settle(failure(cause));
	}

	private ForwardFailedException failure(@Nullable ShutdownSignalException cause) {
		return (cause != null)
				? failure(ConfirmedPublisher.errorKind(cause), "channel closed: " + cause.getMessage(), cause)
				: failure(ForwardFailedException.Kind.PUBLISH_ERROR, "channel closed", null);
	}

	private ForwardFailedException failure(ForwardFailedException.Kind kind, @Nullable String problem,
			@Nullable Throwable cause) {
		String message = "Publish to " + describe() + " failed: " + problem;
		return (cause != null) ? new ForwardFailedException(kind, message, cause)
				: new ForwardFailedException(kind, message);
	}

	/**
	 * Before a channel was taken.
	 * @param kind what went wrong
	 * @param problem the problem, for the exception's message
	 * @param cause the cause, if any
	 */
	void fail(ForwardFailedException.Kind kind, String problem, @Nullable Throwable cause) {
		if (this.settled.compareAndSet(false, true)) {
			this.result.completeExceptionally(failure(kind, problem, cause));
		}
	}

	// Settle once: on the I/O thread (confirm, return, shutdown), the timer or the
	// publisher thread. Only quick work here; giving the channel back happens on
	// other threads.
	private void settle(@Nullable ForwardFailedException failure) {
		if (!this.settled.compareAndSet(false, true)) {
			return;
		}
		ScheduledFuture<?> scheduledTimeout = this.timeout;
		if (scheduledTimeout != null) {
			scheduledTimeout.cancel(false);
		}
		ForwardChannel shared = this.forwardChannel;
		if (shared != null) {
			// A late confirm for it settles nothing; the channel serves other forwards
			// on.
			shared.forget(this.sequenceNumber, this);
			this.publisher.settledOne();
		}
		Channel real = this.target;
		Channel cached = this.channel;
		if (real != null && cached != null) {
			real.removeReturnListener(this);
			real.removeConfirmListener(this);
			real.removeShutdownListener(this);
			// Confirmed (or returned, which is confirmed too): nothing can arrive for
			// it any more.
			boolean reusable = (failure == null || failure.getKind() == ForwardFailedException.Kind.RETURNED)
					&& real.isOpen();
			this.publisher.giveBack(cached, reusable);
		}
		if (failure == null) {
			this.result.complete(null);
		}
		else {
			this.result.completeExceptionally(failure);
		}
	}

	private String describe() {
		return ConfirmedPublisher.describe(this.exchange, this.routingKey);
	}

	private static @Nullable ShutdownSignalException closeReason(Channel channel) {
		return channel.getCloseReason();
	}

}
