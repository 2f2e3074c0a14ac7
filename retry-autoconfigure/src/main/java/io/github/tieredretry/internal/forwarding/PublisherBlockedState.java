package io.github.tieredretry.internal.forwarding;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import com.rabbitmq.client.BlockedListener;
import com.rabbitmq.client.ShutdownSignalException;
import io.github.tieredretry.event.PublisherBlockedEvent;
import io.github.tieredretry.event.PublisherUnblockedEvent;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionListener;

/**
 * Whether the broker blocks the publisher connection. During a memory or disk alarm
 * RabbitMQ stops reading every connection that publishes ({@code connection.blocked}): a
 * forward published then is not confirmed until the alarm clears, and opening or closing
 * a channel waits as long. Forwarding asks this state before it publishes, and holds
 * forwards while the connection is blocked instead of letting them time out.
 * <p>
 * Registered on the publisher connection factory as a {@link ConnectionListener}; the
 * broker's notifications arrive on the connection's I/O thread, so listeners must return
 * at once.
 */
public final class PublisherBlockedState implements ConnectionListener, BlockedListener {

	private static final Log logger = LogFactory.getLog(PublisherBlockedState.class);

	private final Clock clock;

	private final Consumer<Object> events;

	private final List<Listener> listeners = new CopyOnWriteArrayList<>();

	private final AtomicLong episodes = new AtomicLong();

	private volatile @Nullable Blocked blocked;

	/**
	 * Create the state.
	 * @param clock the clock
	 * @param events where {@link PublisherBlockedEvent} and
	 * {@link PublisherUnblockedEvent} are published
	 */
	public PublisherBlockedState(Clock clock, Consumer<Object> events) {
		this.clock = clock;
		this.events = events;
	}

	/**
	 * The publisher connection is blocked.
	 *
	 * @param reason what the broker said, e.g. {@code low on memory}
	 * @param since when the broker blocked it
	 */
	public record Blocked(String reason, Instant since) {
	}

	/**
	 * Told when the publisher connection is blocked and unblocked; called on the
	 * connection's I/O thread.
	 */
	public interface Listener {

		void blocked(Blocked blocked);

		void unblocked(Blocked blocked, Duration duration);

	}

	public void addListener(Listener listener) {
		this.listeners.add(listener);
	}

	/**
	 * Whether the publisher connection is blocked now.
	 * @return whether forwards would wait for the broker's alarm to clear
	 */
	public boolean isBlocked() {
		return this.blocked != null;
	}

	/**
	 * The current block.
	 * @return the block, or {@code null} while the connection is not blocked
	 */
	public @Nullable Blocked current() {
		return this.blocked;
	}

	/**
	 * How many times the publisher connection was blocked since the application started.
	 * @return the number of blocks
	 */
	public long episodes() {
		return this.episodes.get();
	}

	@Override
	public void onCreate(Connection connection) {
		connection.addBlockedListener(this);
	}

	@Override
	public void onClose(Connection connection) {
		// A new connection starts unblocked; the broker blocks it again if its alarm is
		// still on.
		handleUnblocked();
	}

	@Override
	public void onShutDown(ShutdownSignalException signal) {
		handleUnblocked();
	}

	@Override
	public void handleBlocked(String reason) {
		Blocked now = new Blocked(reason, this.clock.instant());
		synchronized (this) {
			if (this.blocked != null) {
				return;
			}
			this.blocked = now;
		}
		this.episodes.incrementAndGet();
		logger.warn("RabbitMQ blocked the tiered-retry publisher connection (" + reason + "): failed messages wait "
				+ "in their consumer until the broker's resource alarm clears; healthy messages keep flowing");
		this.listeners.forEach((listener) -> listener.blocked(now));
		this.events.accept(new PublisherBlockedEvent(reason, now.since()));
	}

	@Override
	public void handleUnblocked() {
		Blocked ended;
		synchronized (this) {
			ended = this.blocked;
			this.blocked = null;
		}
		if (ended == null) {
			return;
		}
		Duration duration = Duration.between(ended.since(), this.clock.instant());
		logger.warn("RabbitMQ unblocked the tiered-retry publisher connection after " + duration.toMillis()
				+ " ms; forwarding the failed messages that waited");
		this.listeners.forEach((listener) -> listener.unblocked(ended, duration));
		this.events.accept(new PublisherUnblockedEvent(ended.reason(), ended.since(), duration));
	}

}
