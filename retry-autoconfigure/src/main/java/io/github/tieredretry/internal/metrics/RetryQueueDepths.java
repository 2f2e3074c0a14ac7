package io.github.tieredretry.internal.metrics;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ShutdownSignalException;
import io.github.tieredretry.internal.broker.RealChannels;
import io.github.tieredretry.internal.topology.RetryTopology;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.AmqpIOException;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.connection.RabbitUtils;

/**
 * The number of ready messages in each tier queue and in the parking lot, read from the
 * broker with passive queue declarations (the management plugin is not needed) and
 * cached: however often metrics are scraped or health is checked, the broker is asked at
 * most once per {@code maxAge}.
 */
public final class RetryQueueDepths {

	/** How long depths read from the broker are reused by default. */
	public static final Duration DEFAULT_MAX_AGE = Duration.ofSeconds(5);

	private final ConnectionFactory connectionFactory;

	private final List<String> queues;

	private final Duration maxAge;

	private final Clock clock;

	private final ReentrantLock readLock = new ReentrantLock();

	private volatile @Nullable Snapshot snapshot;

	/**
	 * Create an instance for the tier queues and the parking lot of a topology.
	 * @param connectionFactory the connection factory to read with
	 * @param topology the retry topology
	 * @param maxAge how long a reading is reused
	 * @param clock the clock
	 */
	public RetryQueueDepths(ConnectionFactory connectionFactory, RetryTopology topology, Duration maxAge, Clock clock) {
		this.connectionFactory = connectionFactory;
		List<String> names = new ArrayList<>(topology.tierQueueNames());
		names.add(topology.parkingLot());
		this.queues = List.copyOf(names);
		this.maxAge = maxAge;
		this.clock = clock;
	}

	/**
	 * The queues whose depth is read: the tier queues, then the parking lot.
	 * @return the queue names
	 */
	public List<String> queues() {
		return this.queues;
	}

	/**
	 * The latest reading, read again from the broker when it is older than the maximum
	 * age. While another thread reads, the previous reading is returned instead of
	 * waiting for it.
	 * @return the depths
	 */
	public Snapshot current() {
		Snapshot last = this.snapshot;
		if (last != null && isFresh(last)) {
			return last;
		}
		if (last == null) {
			this.readLock.lock();
		}
		else if (!this.readLock.tryLock()) {
			return last;
		}
		try {
			Snapshot latest = this.snapshot;
			return (latest != null && isFresh(latest)) ? latest : read();
		}
		finally {
			this.readLock.unlock();
		}
	}

	/**
	 * Read the depths from the broker now.
	 * @return the depths
	 */
	public Snapshot refresh() {
		this.readLock.lock();
		try {
			return read();
		}
		finally {
			this.readLock.unlock();
		}
	}

	private boolean isFresh(Snapshot snapshot) {
		return Duration.between(snapshot.readAt(), this.clock.instant()).compareTo(this.maxAge) < 0;
	}

	private Snapshot read() {
		Snapshot read;
		try {
			read = readFromBroker();
		}
		catch (RuntimeException ex) {
			read = new Snapshot(Map.of(), Set.of(), this.clock.instant(), String.valueOf(ex.getMessage()));
		}
		this.snapshot = read;
		return read;
	}

	private Snapshot readFromBroker() {
		Map<String, Long> depths = new LinkedHashMap<>();
		Set<String> missing = new LinkedHashSet<>();
		Connection connection = this.connectionFactory.createConnection();
		Channel cached = null;
		Channel channel = null;
		try {
			for (String queue : this.queues) {
				if (channel == null || !channel.isOpen()) {
					// The broker closes the channel when a passive declaration finds no
					// queue.
					RealChannels.closeForGood(cached);
					cached = connection.createChannel(false);
					channel = RealChannels.target(cached);
				}
				try {
					depths.put(queue, (long) channel.queueDeclarePassive(queue).getMessageCount());
				}
				catch (IOException ex) {
					if (!isNotFound(ex)) {
						throw new AmqpIOException(ex);
					}
					missing.add(queue);
				}
			}
		}
		finally {
			RealChannels.closeForGood(cached);
			RabbitUtils.closeConnection(connection);
		}
		return new Snapshot(depths, missing, this.clock.instant(), null);
	}

	private static boolean isNotFound(IOException ex) {
		return ex.getCause() instanceof ShutdownSignalException signal
				&& RabbitUtils.isPassiveDeclarationChannelClose(signal);
	}

	/**
	 * Depths read from the broker at one time.
	 *
	 * @param depths ready messages per existing queue
	 * @param missing queues that do not exist on the broker
	 * @param readAt when the depths were read
	 * @param failure why the broker could not be read, or {@code null} when it could
	 */
	public record Snapshot(Map<String, Long> depths, Set<String> missing, Instant readAt, @Nullable String failure) {

		public Snapshot {
			// Copies that keep the queues in topology order (tiers ascending, then the
			// parking lot).
			depths = Collections.unmodifiableMap(new LinkedHashMap<>(depths));
			missing = Collections.unmodifiableSet(new LinkedHashSet<>(missing));
		}

		/**
		 * The depth of a queue.
		 * @param queue the queue's name
		 * @return its ready messages, or {@code null} when it is missing or the broker
		 * could not be read
		 */
		public @Nullable Long depthOf(String queue) {
			return this.depths.get(queue);
		}

		/**
		 * Whether the broker could be read.
		 * @return {@code true} unless the reading failed
		 */
		public boolean isRead() {
			return this.failure == null;
		}

	}

}
