package io.github.tieredretry.forwarding;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmListener;
import com.rabbitmq.client.ReturnListener;
import com.rabbitmq.client.ShutdownListener;
import com.rabbitmq.client.ShutdownSignalException;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ChannelProxy;
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

	/** Confirm timeouts and delayed tasks; every task on it is short. */
	private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(
			daemonThreads("tiered-retry-scheduler"));

	/**
	 * What follows a confirm or a failure and may block: acks and application events, declaring the
	 * topology again, closing a failed channel (a channel close waits for the broker's reply). Confirms
	 * arrive on the connection's I/O thread, which must never block.
	 */
	private final ThreadPoolExecutor followUps;

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
		this.followUps = new ThreadPoolExecutor(4, 4, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
				daemonThreads("tiered-retry-forward-"));
		this.followUps.allowCoreThreadTimeOut(true);
	}

	private static ThreadFactory daemonThreads(String name) {
		AtomicInteger count = new AtomicInteger();
		return (task) -> {
			Thread thread = new Thread(task, name.endsWith("-") ? name + count.incrementAndGet() : name);
			thread.setDaemon(true);
			return thread;
		};
	}

	/**
	 * Where to run what follows a forward's completion: it may block, the thread completing a forward
	 * must not.
	 * @return the executor
	 */
	public Executor followUps() {
		return this.followUps;
	}

	/**
	 * Run a short task later.
	 * @param task the task
	 * @param delayMillis the delay
	 */
	public void schedule(Runnable task, long delayMillis) {
		this.scheduler.schedule(() -> this.followUps.execute(task), delayMillis, TimeUnit.MILLISECONDS);
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
			if (!channel.isOpen()) {
				// Closed by the broker (a missing exchange, 404) while waiting: the wait can end without a
				// confirm when the close clears the unconfirmed publishes.
				Channel target = (channel instanceof ChannelProxy proxy) ? proxy.getTargetChannel() : channel;
				ShutdownSignalException reason = target.getCloseReason();
				throw new ForwardFailedException((reason != null) ? errorKind(reason) : ForwardFailedException.Kind.PUBLISH_ERROR,
						"Channel closed while publishing to " + describe(exchange, routingKey)
								+ ((reason != null) ? ": " + reason.getMessage() : ""));
			}
		}
		catch (ForwardFailedException ex) {
			throw ex;
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
		try {
			// Bounded: a forward that cannot start within the confirm timeout fails like one never confirmed.
			if (!this.inFlight.tryAcquire(this.confirmTimeoutMillis, TimeUnit.MILLISECONDS)) {
				result.completeExceptionally(new ForwardFailedException(ForwardFailedException.Kind.TIMEOUT,
						"Too many forwards waiting for their confirm; could not publish to "
								+ describe(exchange, routingKey) + " within " + this.confirmTimeoutMillis + " ms"));
				return result;
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
			this.inFlight.release();
			result.completeExceptionally(new ForwardFailedException(ForwardFailedException.Kind.PUBLISH_ERROR,
					"No channel to publish to " + describe(exchange, routingKey) + ": " + ex.getMessage(), ex));
			return result;
		}
		// Listeners go on the real channel: the proxy would replace a closed channel by a new one, an RPC
		// that must never run on the connection's I/O thread, where the listeners are called.
		Channel target = (channel instanceof ChannelProxy proxy) ? proxy.getTargetChannel() : channel;
		AsyncForward forward = new AsyncForward(channel, target, exchange, routingKey, result);
		try {
			target.addReturnListener(forward);
			target.addConfirmListener(forward);
			target.addShutdownListener(forward);
			forward.timeout = this.scheduler.schedule(() -> forward.finish(new ForwardFailedException(
					ForwardFailedException.Kind.TIMEOUT, "No confirm within " + this.confirmTimeoutMillis
							+ " ms for the publish to " + describe(exchange, routingKey))),
					this.confirmTimeoutMillis, TimeUnit.MILLISECONDS);
			AMQP.BasicProperties publishable = ForwardedProperties.fitToFrame(
					ForwardedProperties.withPublishableUserId(properties, this.connectionFactory.getUsername()),
					body.length, channel.getConnection().getFrameMax());
			channel.basicPublish(exchange, routingKey, true, publishable, body);
		}
		catch (IOException | RuntimeException ex) {
			// Includes the scheduler refusing the timeout once the publisher is closed.
			forward.finish(new ForwardFailedException(errorKind(ex),
					"Publish to " + describe(exchange, routingKey) + " failed: " + ex.getMessage(), ex));
		}
		return result;
	}

	/** One asynchronous forward on a channel of its own. */
	private final class AsyncForward implements ConfirmListener, ReturnListener, ShutdownListener {

		private final Channel channel;

		private final Channel target;

		private final String exchange;

		private final String routingKey;

		private final CompletableFuture<Void> result;

		private final AtomicBoolean finished = new AtomicBoolean();

		private final AtomicReference<String> returned = new AtomicReference<>();

		volatile @Nullable ScheduledFuture<?> timeout;

		AsyncForward(Channel channel, Channel target, String exchange, String routingKey,
				CompletableFuture<Void> result) {
			this.channel = channel;
			this.target = target;
			this.exchange = exchange;
			this.routingKey = routingKey;
			this.result = result;
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
			// Quick work only: this runs on the connection's I/O thread, the scheduler or a consumer.
			this.target.removeReturnListener(this);
			this.target.removeConfirmListener(this);
			this.target.removeShutdownListener(this);
			// A channel that may still get a confirm must never be reused: it is closed for good.
			releaseChannel(this.channel, failure == null || failure.getKind() == ForwardFailedException.Kind.RETURNED);
			ConfirmedPublisher.this.inFlight.release();
			if (failure == null) {
				this.result.complete(null);
			}
			else {
				this.result.completeExceptionally(failure);
			}
		}

	}

	/**
	 * Give a forward's channel back to the cache, or close it for good, on a follow-up thread: the channel
	 * proxy may talk to the broker, and the caller may be the I/O thread that would have to read the reply.
	 */
	private void releaseChannel(Channel channel, boolean reusable) {
		try {
			this.followUps.execute(() -> {
				if (reusable) {
					closeQuietly(channel);
					return;
				}
				RabbitUtils.setPhysicalCloseRequired(channel, true);
				try {
					closeQuietly(channel);
				}
				finally {
					RabbitUtils.setPhysicalCloseRequired(channel, false);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			// Shutting down: the connection closes with the application.
		}
	}

	private static void closeQuietly(Channel channel) {
		try {
			channel.close();
		}
		catch (IOException | TimeoutException | RuntimeException ex) {
			// The channel is unusable either way; the cache replaces it.
		}
	}

	/**
	 * Stop completing forwards: those already confirmed or failed still complete; a forward still waiting
	 * for its confirm when the wait ends leaves its original unacked, so the broker delivers it again.
	 */
	@Override
	public void close() {
		this.scheduler.shutdownNow();
		this.followUps.shutdown();
		try {
			this.followUps.awaitTermination(this.confirmTimeoutMillis, TimeUnit.MILLISECONDS);
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
