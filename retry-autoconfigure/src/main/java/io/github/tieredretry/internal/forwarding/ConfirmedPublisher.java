package io.github.tieredretry.internal.forwarding;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ShutdownSignalException;
import io.github.tieredretry.internal.broker.RealChannels;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * Publishes messages persistently and mandatory, and completes each publish's future when
 * the broker confirms it, or fails it when the broker nacks or returns it, closes its
 * channel, or sends no confirm in time. There is one publish path:
 * {@link #publishAndWait} waits for the same future.
 * <p>
 * Forwards to the starter's own exchanges ({@link #publish}) share a few confirm
 * channels, each matching confirms to publishes by sequence number, as a client
 * publishing on its own would ({@link ForwardChannel}): a channel that dies fails only
 * what was in flight on it. A publish whose caller waits ({@link #publishAndWait}) or
 * that goes to an exchange the application names ({@link #publishAsSent}) runs every step
 * (listeners, publish, confirm, return, close) on a real channel of its own, which
 * carries no other publish until it is settled: an exchange that does not exist closes
 * only that channel. Such a channel that may still receive a confirm (timed out, nacked,
 * closed) is never reused.
 * <p>
 * Callers never touch the publisher connection: publishes are made on the publisher
 * thread of {@link RetryExecutors}. While RabbitMQ blocks the connection (a resource
 * alarm) new publishes are held, and published when it is unblocked; confirm timeouts do
 * not run out meanwhile (the broker is not reading, not refusing).
 */
public final class ConfirmedPublisher implements PublisherBlockedState.Listener, AutoCloseable {

	private final ConnectionFactory connectionFactory;

	private final Duration confirmTimeout;

	private final RetryExecutors executors;

	private final PublisherBlockedState blockedState;

	/**
	 * How many confirm channels forwards share by default. More than one lets the broker
	 * route on more than one channel process; few, so that a dying channel fails few
	 * forwards.
	 */
	static final int FORWARD_CHANNELS = 2;

	/**
	 * The channels forwards share, in turn; only touched on the publisher thread, and by
	 * {@link #close()} once nothing is published any more.
	 */
	private final @Nullable ForwardChannel[] forwardChannels;

	/** The next forward channel to publish on; only touched on the publisher thread. */
	private int nextForwardChannel;

	/**
	 * Publishes on a channel of their own that may wait for their confirm at once: one
	 * per cached channel, so that a channel is taken from the cache and given back to it,
	 * never opened and closed per publish.
	 */
	private final int channelSlots;

	/** Channel slots in use; only touched on the publisher thread. */
	private int slotsInUse;

	/**
	 * Publishes waiting for a channel slot, in order; only touched on the publisher
	 * thread.
	 */
	private final Queue<Publication> waitingForSlot = new ArrayDeque<>();

	/**
	 * Publishes started and not yet settled (with a channel of their own: not yet given
	 * their channel back), for {@link #close()}.
	 */
	private final AtomicInteger unsettled = new AtomicInteger();

	/** Notified when {@link #unsettled} drops to zero. */
	private final Object allSettled = new Object();

	/** Publishes held while the connection is blocked; guarded by {@code this}. */
	private final Queue<Publication> held = new ArrayDeque<>();

	private volatile boolean closed;

	/**
	 * Create a publisher.
	 * @param connectionFactory a factory whose channels are in confirm mode (publisher
	 * confirm type SIMPLE)
	 * @param confirmTimeout how long to wait for each confirm
	 * @param executors the threads to publish and settle on
	 * @param blockedState whether the broker blocks the connection
	 */
	public ConfirmedPublisher(ConnectionFactory connectionFactory, Duration confirmTimeout, RetryExecutors executors,
			PublisherBlockedState blockedState) {
		this(connectionFactory, confirmTimeout, executors, blockedState, FORWARD_CHANNELS);
	}

	ConfirmedPublisher(ConnectionFactory connectionFactory, Duration confirmTimeout, RetryExecutors executors,
			PublisherBlockedState blockedState, int forwardChannels) {
		this.forwardChannels = new ForwardChannel[forwardChannels];
		this.connectionFactory = connectionFactory;
		this.confirmTimeout = confirmTimeout;
		this.executors = executors;
		this.blockedState = blockedState;
		this.channelSlots = (connectionFactory instanceof CachingConnectionFactory caching)
				? Math.max(1, caching.getChannelCacheSize()) : 25;
		blockedState.addListener(this);
	}

	/**
	 * Publish; the future completes when the broker has confirmed the message. Returns at
	 * once, on any thread: the publish itself happens on the publisher thread.
	 * @param exchange the exchange
	 * @param routingKey the routing key
	 * @param properties the message properties, published as they are (but see
	 * {@link ForwardedProperties})
	 * @param body the body
	 * @return completes on the confirm; fails with a {@link ForwardFailedException}
	 */
	public CompletableFuture<Void> publish(String exchange, String routingKey, AMQP.BasicProperties properties,
			byte[] body) {
		return publish(new Publication(this, exchange, routingKey, properties, body, false));
	}

	/**
	 * Publish the properties exactly as given, extra routing keys ({@code CC},
	 * {@code BCC}) and {@code user-id} included, as the application itself would: a
	 * delayed send reaching its target. The future completes when the broker has
	 * confirmed the message.
	 * @param exchange the exchange
	 * @param routingKey the routing key
	 * @param properties the message properties, published as they are
	 * @param body the body
	 * @return completes on the confirm; fails with a {@link ForwardFailedException}
	 * ({@code RETURNED} when no queue took it, {@code MISSING_EXCHANGE} when the exchange
	 * does not exist)
	 */
	public CompletableFuture<Void> publishAsSent(String exchange, String routingKey, AMQP.BasicProperties properties,
			byte[] body) {
		return publish(new Publication(this, exchange, routingKey, properties, body, false, true));
	}

	private CompletableFuture<Void> publish(Publication publication) {
		submit(publication);
		return publication.result();
	}

	/**
	 * Publish and wait for the confirm. Fails at once while the broker blocks the
	 * connection, and also when it blocks before the publish was made: the caller (a
	 * replay, say) should not wait for a resource alarm to clear, and a publish it was
	 * told failed must never go out later.
	 * @param exchange the exchange
	 * @param routingKey the routing key
	 * @param properties the message properties
	 * @param body the body
	 * @throws ForwardFailedException when the publish was not confirmed
	 */
	public void publishAndWait(String exchange, String routingKey, AMQP.BasicProperties properties, byte[] body) {
		CompletableFuture<Void> result = publish(new Publication(this, exchange, routingKey, properties, body, true));
		try {
			// The publish's own timeout settles it; this bound only guards against a
			// publisher thread that waits for a channel the broker does not give.
			result.get(this.confirmTimeout.toMillis() * 2 + 1000, TimeUnit.MILLISECONDS);
		}
		catch (ExecutionException ex) {
			throw (ex.getCause() instanceof ForwardFailedException failure) ? failure
					: new ForwardFailedException(ForwardFailedException.Kind.PUBLISH_ERROR,
							"Publish to " + describe(exchange, routingKey) + " failed: " + ex.getCause(), ex);
		}
		catch (TimeoutException ex) {
			throw new ForwardFailedException(ForwardFailedException.Kind.TIMEOUT,
					"The publish to " + describe(exchange, routingKey) + " was not settled in time; "
							+ "if the broker confirms it later, the message exists twice",
					ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new ForwardFailedException(ForwardFailedException.Kind.PUBLISH_ERROR,
					"Interrupted while waiting for the confirm of " + describe(exchange, routingKey), ex);
		}
	}

	/**
	 * Whether the broker blocks publishing now.
	 * @return whether publishes are held
	 */
	public boolean isBlocked() {
		return this.blockedState.isBlocked();
	}

	private void submit(Publication publication) {
		synchronized (this) {
			if (this.closed) {
				publication.fail(ForwardFailedException.Kind.PUBLISH_ERROR, "the publisher is closed", null);
				return;
			}
			PublisherBlockedState.Blocked blocked = this.blockedState.current();
			if (blocked != null) {
				if (publication.failIfBlocked()) {
					publication.fail(ForwardFailedException.Kind.BLOCKED,
							"RabbitMQ blocks publishing (" + blocked.reason() + "); nothing was published", null);
				}
				else {
					this.held.add(publication);
				}
				return;
			}
		}
		try {
			this.executors.publisher().execute(() -> start(publication));
		}
		catch (RejectedExecutionException ex) {
			publication.fail(ForwardFailedException.Kind.PUBLISH_ERROR, "the publisher is closed", ex);
		}
	}

	@Override
	public void blocked(PublisherBlockedState.Blocked blocked) {
		// Publishes already on their way wait for their confirm; their timeouts are
		// suspended (see Publication).
	}

	@Override
	public void unblocked(PublisherBlockedState.Blocked blocked, Duration duration) {
		List<Publication> release;
		synchronized (this) {
			release = new ArrayList<>(this.held);
			this.held.clear();
		}
		release.forEach(this::submit);
	}

	// On the publisher thread: publish now if a channel slot is free, else wait in line
	// for one.
	private void start(Publication publication) {
		if (this.closed) {
			publication.fail(ForwardFailedException.Kind.PUBLISH_ERROR, "the publisher is closed", null);
			return;
		}
		if (publication.sharesAChannel()) {
			startOnForwardChannel(publication);
			return;
		}
		if (this.slotsInUse >= this.channelSlots) {
			// Every slot's publish is settled within the confirm timeout (or waits out a
			// resource alarm).
			this.waitingForSlot.add(publication);
			return;
		}
		if (this.blockedState.isBlocked()) {
			// Blocked since it was submitted: held, or failed if its caller waits.
			submit(publication);
			return;
		}
		this.slotsInUse++;
		this.unsettled.incrementAndGet();
		Channel channel;
		try {
			channel = this.connectionFactory.createConnection().createChannel(false);
		}
		catch (RuntimeException ex) {
			publication.fail(errorKind(ex), "no channel: " + ex.getMessage(), ex);
			freeSlot();
			return;
		}
		publication.publishOn(channel);
	}

	// On the publisher thread: publish on the next forward channel, opening it first if
	// it is not open (yet or any more).
	private void startOnForwardChannel(Publication publication) {
		if (this.blockedState.isBlocked()) {
			submit(publication);
			return;
		}
		ForwardChannel channel;
		try {
			channel = nextForwardChannel();
		}
		catch (RuntimeException ex) {
			publication.fail(errorKind(ex), "no channel: " + ex.getMessage(), ex);
			return;
		}
		this.unsettled.incrementAndGet();
		publication.publishOn(channel);
	}

	private ForwardChannel nextForwardChannel() {
		int index = this.nextForwardChannel;
		this.nextForwardChannel = (index + 1) % this.forwardChannels.length;
		ForwardChannel channel = this.forwardChannels[index];
		if (channel == null || !channel.isUsable()) {
			openForwardChannels();
			channel = this.forwardChannels[index];
		}
		return Objects.requireNonNull(channel);
	}

	// All of them at once: opening one waits for the broker, and a forward should not
	// wait for that while another channel is open (the broker may be slow to answer,
	// or the network may stall).
	private void openForwardChannels() {
		for (int i = 0; i < this.forwardChannels.length; i++) {
			ForwardChannel channel = this.forwardChannels[i];
			if (channel != null && channel.isUsable()) {
				continue;
			}
			if (channel != null) {
				// Died: what was in flight on it has failed already.
				this.forwardChannels[i] = null;
				letGoLater(channel);
			}
			this.forwardChannels[i] = ForwardChannel.on(this.connectionFactory.createConnection().createChannel(false));
		}
	}

	private void letGoLater(ForwardChannel channel) {
		try {
			this.executors.maintenance().execute(channel::letGo);
		}
		catch (RejectedExecutionException ex) {
			// Shutting down: the connection closes with the application.
		}
	}

	/**
	 * On the publisher thread, once a publish's channel is back in the cache (or closed).
	 */
	private void freeSlot() {
		this.slotsInUse--;
		settledOne();
		Publication next = this.waitingForSlot.poll();
		if (next != null) {
			start(next);
		}
	}

	/**
	 * Fail the publishes held while the broker blocks the connection (the application
	 * stops): their callers put their originals back now rather than leaving them to
	 * closing channels.
	 */
	public void releaseHeld() {
		List<Publication> release;
		synchronized (this) {
			release = new ArrayList<>(this.held);
			this.held.clear();
		}
		release.forEach((publication) -> publication.fail(ForwardFailedException.Kind.BLOCKED,
				"the application is stopping while RabbitMQ blocks publishing", null));
	}

	/**
	 * Stop publishing: held publishes fail (their originals go back to their queue),
	 * publishes waiting for their confirm get up to the confirm timeout to be settled.
	 */
	@Override
	public void close() {
		synchronized (this) {
			this.closed = true;
		}
		releaseHeld();
		long deadline = System.nanoTime() + this.confirmTimeout.toNanos();
		synchronized (this.allSettled) {
			long remaining = deadline - System.nanoTime();
			while (this.unsettled.get() > 0 && remaining > 0) {
				try {
					TimeUnit.NANOSECONDS.timedWait(this.allSettled, remaining);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return;
				}
				remaining = deadline - System.nanoTime();
			}
		}
		for (int i = 0; i < this.forwardChannels.length; i++) {
			ForwardChannel channel = this.forwardChannels[i];
			if (channel != null) {
				this.forwardChannels[i] = null;
				channel.letGo();
			}
		}
	}

	String username() {
		return this.connectionFactory.getUsername();
	}

	RetryExecutors executors() {
		return this.executors;
	}

	Duration confirmTimeout() {
		return this.confirmTimeout;
	}

	boolean isClosed() {
		return this.closed;
	}

	void settledOne() {
		if (this.unsettled.decrementAndGet() == 0) {
			synchronized (this.allSettled) {
				this.allSettled.notifyAll();
			}
		}
	}

	// Give a channel back to the cache (no broker round trip) or close it for good (on
	// the maintenance thread: a close waits for the broker's reply), then free its slot;
	// on the publisher thread, so that the next publish finds the channel in the cache.
	void giveBack(Channel channel, boolean reusable) {
		try {
			this.executors.publisher().execute(() -> {
				if (reusable) {
					RealChannels.release(channel);
				}
				else {
					closeForGoodLater(channel);
				}
				freeSlot();
			});
		}
		catch (RejectedExecutionException ex) {
			// Shutting down: the connection closes with the application.
			settledOne();
		}
	}

	private void closeForGoodLater(Channel channel) {
		try {
			this.executors.maintenance().execute(() -> RealChannels.closeForGood(channel));
		}
		catch (RejectedExecutionException ex) {
			// Shutting down: the connection closes with the application.
		}
	}

	/**
	 * A publish to an exchange that does not exist closes the channel with 404; it shows
	 * up as the cause of whatever the next channel operation throws.
	 * @param failure what the channel operation threw
	 * @return the kind of failure
	 */
	static ForwardFailedException.Kind errorKind(@Nullable Throwable failure) {
		return (notFoundClose(failure) != null) ? ForwardFailedException.Kind.MISSING_EXCHANGE
				: ForwardFailedException.Kind.PUBLISH_ERROR;
	}

	/**
	 * The broker's {@code 404} close of a channel, anywhere in the cause chain.
	 * @param failure what the channel operation threw, or why the channel closed
	 * @return the close, or {@code null}
	 */
	static AMQP.Channel.@Nullable Close notFoundClose(@Nullable Throwable failure) {
		for (Throwable current = failure; current != null; current = current.getCause()) {
			if (current instanceof ShutdownSignalException signal
					&& signal.getReason() instanceof AMQP.Channel.Close close
					&& close.getReplyCode() == AMQP.NOT_FOUND) {
				return close;
			}
			if (current.getCause() == current) {
				break;
			}
		}
		return null;
	}

	static String describe(String exchange, String routingKey) {
		return "exchange '" + exchange + "' with routing key '" + routingKey + "'";
	}

}
