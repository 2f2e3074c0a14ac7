package io.github.tieredretry.forwarding;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmListener;
import com.rabbitmq.client.ReturnListener;
import com.rabbitmq.client.ShutdownListener;
import com.rabbitmq.client.ShutdownSignalException;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.connection.RabbitUtils;

/**
 * Publishes one message persistently, mandatory, and waits for the broker's confirm
 * ({@link #publish}), or completes a future when it arrives ({@link #publishAsync}).
 * <p>
 * Uses raw AMQP properties so that a forwarded message keeps exactly the properties it was received
 * with, and a connection factory of its own (publisher confirms on, separate from the consumers'
 * connection) whatever the application set for {@code spring.rabbitmq.publisher-confirm-type}.
 * A return (unroutable) is delivered by the broker before the confirm, on the same channel, so it is
 * known once the confirm has arrived.
 */
public final class ConfirmedPublisher implements AutoCloseable {

	private final ConnectionFactory connectionFactory;

	private final long confirmTimeoutMillis;

	/**
	 * Asynchronous forwards in flight at most: one cached channel each (as many as the channel cache
	 * holds), so that a burst of failures reuses channels rather than opening and closing them.
	 */
	private final Semaphore inFlight;

	/**
	 * Completes asynchronous forwards. Confirms arrive on the connection's I/O thread, which must not
	 * block; releasing a channel and acking the original happen here instead.
	 */
	private final ScheduledExecutorService completions = Executors.newSingleThreadScheduledExecutor((task) -> {
		Thread thread = new Thread(task, "tiered-retry-forward-confirms");
		thread.setDaemon(true);
		this.completionThread = thread;
		return thread;
	});

	private volatile @Nullable Thread completionThread;

	/**
	 * Create a publisher.
	 * @param connectionFactory a factory whose channels are in confirm mode (publisher confirm type SIMPLE)
	 * @param confirmTimeout how long to wait for each confirm
	 */
	public ConfirmedPublisher(ConnectionFactory connectionFactory, Duration confirmTimeout) {
		this.connectionFactory = connectionFactory;
		this.confirmTimeoutMillis = confirmTimeout.toMillis();
		this.inFlight = new Semaphore((connectionFactory instanceof CachingConnectionFactory caching)
				? Math.max(1, caching.getChannelCacheSize()) : 25);
	}

	/**
	 * Publish and wait for the confirm.
	 * @param exchange the exchange
	 * @param routingKey the routing key
	 * @param properties the message properties, published as they are
	 * @param body the body
	 * @throws ForwardFailedException when the publish is nacked, returned, times out or fails
	 */
	public void publish(String exchange, String routingKey, AMQP.BasicProperties properties, byte[] body) {
		Channel channel;
		try {
			Connection connection = this.connectionFactory.createConnection();
			channel = connection.createChannel(false);
		}
		catch (RuntimeException ex) {
			throw new ForwardFailedException(ForwardFailedException.Kind.PUBLISH_ERROR,
					"No channel to publish to " + describe(exchange, routingKey) + ": " + ex.getMessage(), ex);
		}
		AtomicReference<String> returned = new AtomicReference<>();
		ReturnListener returnListener = (replyCode, replyText, returnedExchange, returnedRoutingKey, returnedProperties,
				returnedBody) -> returned.set(replyCode + " " + replyText);
		try {
			channel.addReturnListener(returnListener);
			AMQP.BasicProperties publishable = ForwardedProperties.fitToFrame(
					ForwardedProperties.withPublishableUserId(properties, this.connectionFactory.getUsername()),
					body.length, channel.getConnection().getFrameMax());
			channel.basicPublish(exchange, routingKey, true, publishable, body);
			// OrDie: a nack or a timeout closes the channel, so a late confirm can never be
			// mistaken for the confirm of the next publish on a cached channel.
			channel.waitForConfirmsOrDie(this.confirmTimeoutMillis);
		}
		catch (TimeoutException ex) {
			throw new ForwardFailedException(ForwardFailedException.Kind.TIMEOUT, "No confirm within "
					+ this.confirmTimeoutMillis + " ms for the publish to " + describe(exchange, routingKey), ex);
		}
		catch (IOException ex) {
			// amqp-client signals a nack from waitForConfirmsOrDie with this message.
			ForwardFailedException.Kind kind = String.valueOf(ex.getMessage()).contains("nacks received")
					? ForwardFailedException.Kind.NACKED : errorKind(ex);
			throw new ForwardFailedException(kind,
					"Publish to " + describe(exchange, routingKey) + " failed: " + ex.getMessage(), ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new ForwardFailedException(ForwardFailedException.Kind.PUBLISH_ERROR,
					"Interrupted while waiting for the confirm of " + describe(exchange, routingKey), ex);
		}
		catch (RuntimeException ex) {
			throw new ForwardFailedException(errorKind(ex),
					"Publish to " + describe(exchange, routingKey) + " failed: " + ex.getMessage(), ex);
		}
		finally {
			closeQuietly(channel, returnListener);
		}
		String unroutable = returned.get();
		if (unroutable != null) {
			throw new ForwardFailedException(ForwardFailedException.Kind.RETURNED,
					"Broker returned the message published to " + describe(exchange, routingKey) + ": " + unroutable);
		}
	}

	/**
	 * Publish without waiting: the future completes when the broker confirms (or fails when it nacks or
	 * returns the message, closes the channel, or no confirm arrives in time). Each forward has a cached
	 * channel to itself, so a return and a confirm always belong to it. Blocks only while too many forwards
	 * are in flight.
	 * @param exchange the exchange
	 * @param routingKey the routing key
	 * @param properties the message properties, published as they are
	 * @param body the body
	 * @return completes on the confirm; fails with a {@link ForwardFailedException}
	 */
	public CompletableFuture<Void> publishAsync(String exchange, String routingKey, AMQP.BasicProperties properties,
			byte[] body) {
		CompletableFuture<Void> result = new CompletableFuture<>();
		// A forward retried after healing starts on the completion thread, which must never wait for a
		// permit that only it can give back.
		boolean limited = Thread.currentThread() != this.completionThread;
		try {
			if (limited) {
				this.inFlight.acquire();
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			result.completeExceptionally(new ForwardFailedException(ForwardFailedException.Kind.PUBLISH_ERROR,
					"Interrupted before publishing to " + describe(exchange, routingKey), ex));
			return result;
		}
		Channel channel;
		try {
			channel = this.connectionFactory.createConnection().createChannel(false);
		}
		catch (RuntimeException ex) {
			if (limited) {
				this.inFlight.release();
			}
			result.completeExceptionally(new ForwardFailedException(ForwardFailedException.Kind.PUBLISH_ERROR,
					"No channel to publish to " + describe(exchange, routingKey) + ": " + ex.getMessage(), ex));
			return result;
		}
		AsyncForward forward = new AsyncForward(channel, exchange, routingKey, result, limited);
		try {
			channel.addReturnListener(forward);
			channel.addConfirmListener(forward);
			channel.addShutdownListener(forward);
			forward.timeout = this.completions.schedule(() -> forward.finish(new ForwardFailedException(
					ForwardFailedException.Kind.TIMEOUT, "No confirm within " + this.confirmTimeoutMillis
							+ " ms for the publish to " + describe(exchange, routingKey))),
					this.confirmTimeoutMillis, TimeUnit.MILLISECONDS);
			AMQP.BasicProperties publishable = ForwardedProperties.fitToFrame(
					ForwardedProperties.withPublishableUserId(properties, this.connectionFactory.getUsername()),
					body.length, channel.getConnection().getFrameMax());
			channel.basicPublish(exchange, routingKey, true, publishable, body);
		}
		catch (IOException | RuntimeException ex) {
			forward.finish(new ForwardFailedException(errorKind(ex),
					"Publish to " + describe(exchange, routingKey) + " failed: " + ex.getMessage(), ex));
		}
		return result;
	}

	/** One asynchronous forward on a channel of its own. */
	private final class AsyncForward implements ConfirmListener, ReturnListener, ShutdownListener {

		private final Channel channel;

		private final String exchange;

		private final String routingKey;

		private final CompletableFuture<Void> result;

		private final boolean limited;

		private final AtomicBoolean finished = new AtomicBoolean();

		private final AtomicReference<String> returned = new AtomicReference<>();

		volatile @Nullable ScheduledFuture<?> timeout;

		AsyncForward(Channel channel, String exchange, String routingKey, CompletableFuture<Void> result,
				boolean limited) {
			this.channel = channel;
			this.exchange = exchange;
			this.routingKey = routingKey;
			this.result = result;
			this.limited = limited;
		}

		@Override
		public void handleReturn(int replyCode, String replyText, String exchange, String routingKey,
				AMQP.BasicProperties properties, byte[] body) {
			// The broker sends a return before the confirm of the same publish.
			this.returned.set(replyCode + " " + replyText);
		}

		@Override
		public void handleAck(long deliveryTag, boolean multiple) {
			String unroutable = this.returned.get();
			finish((unroutable == null) ? null : new ForwardFailedException(ForwardFailedException.Kind.RETURNED,
					"Broker returned the message published to " + describe(this.exchange, this.routingKey) + ": "
							+ unroutable));
		}

		@Override
		public void handleNack(long deliveryTag, boolean multiple) {
			finish(new ForwardFailedException(ForwardFailedException.Kind.NACKED,
					"Publish to " + describe(this.exchange, this.routingKey) + " failed: nacked by the broker"));
		}

		@Override
		public void shutdownCompleted(ShutdownSignalException cause) {
			// A missing exchange (404), a frame the broker refused, a lost connection: no confirm will come.
			finish(new ForwardFailedException(errorKind(cause), "Publish to "
					+ describe(this.exchange, this.routingKey) + " failed: " + cause.getMessage(), cause));
		}

		void finish(@Nullable ForwardFailedException failure) {
			if (!this.finished.compareAndSet(false, true)) {
				return;
			}
			ScheduledFuture<?> scheduledTimeout = this.timeout;
			if (scheduledTimeout != null) {
				scheduledTimeout.cancel(false);
			}
			ConfirmedPublisher.this.completions.execute(() -> {
				try {
					this.channel.removeReturnListener(this);
					this.channel.removeConfirmListener(this);
					this.channel.removeShutdownListener(this);
					if (failure != null && failure.getKind() != ForwardFailedException.Kind.RETURNED) {
						// Never hand a channel with a confirm still outstanding back to the cache.
						RabbitUtils.setPhysicalCloseRequired(this.channel, true);
					}
					this.channel.close();
				}
				catch (IOException | TimeoutException | RuntimeException ex) {
					// The channel is unusable either way; the cache replaces it.
				}
				finally {
					RabbitUtils.setPhysicalCloseRequired(this.channel, false);
					if (this.limited) {
						ConfirmedPublisher.this.inFlight.release();
					}
				}
				if (failure == null) {
					this.result.complete(null);
				}
				else {
					this.result.completeExceptionally(failure);
				}
			});
		}

	}

	/**
	 * Stop completing forwards: those already confirmed or failed still complete; a forward still waiting
	 * for its confirm when the wait ends leaves its original unacked, so the broker delivers it again.
	 */
	@Override
	public void close() {
		this.completions.shutdown();
		try {
			this.completions.awaitTermination(this.confirmTimeoutMillis, TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * A publish to an exchange that does not exist closes the channel with 404; it shows up as the cause
	 * of whatever the next channel operation throws.
	 */
	private static ForwardFailedException.Kind errorKind(Throwable failure) {
		for (Throwable current = failure; current != null; current = current.getCause()) {
			if (current instanceof ShutdownSignalException signal && signal.getReason() instanceof AMQP.Channel.Close close
					&& close.getReplyCode() == AMQP.NOT_FOUND) {
				return ForwardFailedException.Kind.MISSING_EXCHANGE;
			}
			if (current.getCause() == current) {
				break;
			}
		}
		return ForwardFailedException.Kind.PUBLISH_ERROR;
	}

	private static void closeQuietly(Channel channel, ReturnListener returnListener) {
		try {
			channel.removeReturnListener(returnListener);
			channel.close();
		}
		catch (IOException | TimeoutException | RuntimeException ex) {
			// The channel is unusable either way; the cache replaces it.
		}
	}

	private static String describe(String exchange, String routingKey) {
		return "exchange '" + exchange + "' with routing key '" + routingKey + "'";
	}

}
