package io.github.tieredretry.parkinglot;

import java.io.IOException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.ShutdownSignalException;
import io.github.tieredretry.broker.RealChannels;
import io.github.tieredretry.forwarding.ForwardFailedException;
import io.github.tieredretry.forwarding.MessageForwarder;
import io.github.tieredretry.headers.HeaderChanges;
import io.github.tieredretry.headers.RetryHeaderValues;
import io.github.tieredretry.headers.RetryHeaders;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.AmqpIOException;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.connection.RabbitUtils;

/**
 * Peeks at, replays and purges parked messages, without ever losing one.
 * <p>
 * Every operation reads the parking lot with {@code basic.get} and manual acknowledgement, looking at no
 * more messages than the parking lot held when it started (so messages parked meanwhile, including
 * replayed ones that fail again, are never looked at twice). Messages that are not taken out stay
 * unacknowledged until the end and are then requeued with {@code basic.nack}; if the application dies
 * half-way, the broker requeues them when the channel closes. A replayed message is acked only after its
 * publish to the origin queue has been confirmed: a crash in between can duplicate it, never lose it.
 * <p>
 * Requeued messages keep their place in a classic queue. A quorum queue appends them at its tail (on
 * RabbitMQ 3.10 without a delivery limit) and counts a delivery for each; see the observability guide.
 * Operations of one instance run one at a time; a concurrent operation from another instance simply
 * does not see the messages this one holds.
 */
public final class ParkingLotService {

	private static final Log logger = LogFactory.getLog(ParkingLotService.class);

	/** Header counting how often a message was replayed from the parking lot. */
	public static final String REPLAY_COUNT = RetryHeaders.REPLAY_COUNT;

	/** Header with the time of the message's latest replay, epoch milliseconds. */
	public static final String REPLAYED_AT = RetryHeaders.REPLAYED_AT;

	/** A replayed message's origin queue does not exist (the broker returned the publish). */
	public static final String ORIGIN_QUEUE_MISSING = "origin-queue-missing";

	/** A parked message has no {@code retry-queue} header: there is nowhere to replay it to. */
	public static final String NO_ORIGIN_QUEUE = "no-origin-queue";

	/** The publish to the origin queue was nacked or not confirmed in time; the replay stopped there. */
	public static final String PUBLISH_FAILED = "publish-failed";

	/** How many parked messages a peek returns unless told otherwise. */
	public static final int DEFAULT_PEEK_LIMIT = 20;

	/** The most parked messages one peek returns. */
	public static final int MAX_PEEK_LIMIT = 200;

	/** The longest body preview, in characters. */
	static final int PREVIEW_LENGTH = 256;

	/** The most stayed messages listed in a replay result (all are counted). */
	static final int MAX_LISTED_STAYED = 100;

	/**
	 * Headers that describe the previous retry cycle; a replayed message starts a fresh one.
	 * {@code retry-original-expiration} is kept: the message stays without expiration.
	 */
	private static final Set<String> RESET_ON_REPLAY = Set.of(RetryHeaders.COUNT, RetryHeaders.QUEUE,
			RetryHeaders.DUE, RetryHeaders.FIRST_FAILURE, RetryHeaders.EXCEPTION, RetryHeaders.ERROR,
			RetryHeaders.STACK_TRACE, RetryHeaders.TIER, RetryHeaders.PARKED_REASON, RetryHeaders.PARKED_AT);

	private final ConnectionFactory connectionFactory;

	private final String parkingLot;

	private final Replayer replayer;

	private final Clock clock;

	private final ReentrantLock operationLock = new ReentrantLock();

	/**
	 * Create a service for a parking lot.
	 * @param connectionFactory the connection factory to read the parking lot with
	 * @param parkingLot the parking lot's queue
	 * @param forwarder publishes replayed messages to their origin queue, confirmed
	 * @param clock the clock
	 */
	public ParkingLotService(ConnectionFactory connectionFactory, String parkingLot, MessageForwarder forwarder,
			Clock clock) {
		this(connectionFactory, parkingLot, forwarder::toQueue, clock);
	}

	ParkingLotService(ConnectionFactory connectionFactory, String parkingLot, Replayer replayer, Clock clock) {
		this.connectionFactory = connectionFactory;
		this.parkingLot = parkingLot;
		this.replayer = replayer;
		this.clock = clock;
	}

	/**
	 * The parking lot's queue.
	 * @return its name
	 */
	public String parkingLot() {
		return this.parkingLot;
	}

	/**
	 * The oldest parked messages, left where they are.
	 * @param originQueue only messages that failed on this queue, or {@code null} for all
	 * @param limit the most messages to return, 1 to {@value #MAX_PEEK_LIMIT}
	 * @return the messages
	 * @throws IllegalArgumentException when the limit is out of range
	 */
	public PeekResult peek(@Nullable String originQueue, int limit) {
		if (limit < 1 || limit > MAX_PEEK_LIMIT) {
			throw new IllegalArgumentException("limit must be between 1 and " + MAX_PEEK_LIMIT + " but was " + limit);
		}
		List<ParkedMessage> messages = new ArrayList<>();
		Scanned scanned = scan(new Visitor() {

			@Override
			public boolean wantsMore() {
				return messages.size() < limit;
			}

			@Override
			public Decision visit(GetResponse message) {
				if (isFrom(message, originQueue)) {
					messages.add(describe(message));
				}
				return Decision.KEEP;
			}

		});
		return new PeekResult(this.parkingLot, scanned.depth(), scanned.count(), messages);
	}

	/**
	 * Move parked messages back to the queue whose listener failed, oldest first, with their retry state
	 * reset: a message that fails again starts a fresh retry cycle. A message whose origin queue no longer
	 * exists stays parked. A publish that is nacked or not confirmed stops the replay (the broker is in
	 * trouble); that message and all later ones stay parked.
	 * @param originQueue only messages that failed on this queue, or {@code null} for all
	 * @param limit the most messages to try, or {@code null} for all
	 * @return how many moved and how many stayed, and why
	 * @throws IllegalArgumentException when the limit is less than 1
	 */
	public ReplayResult replay(@Nullable String originQueue, @Nullable Integer limit) {
		if (limit != null && limit < 1) {
			throw new IllegalArgumentException("limit must be at least 1 but was " + limit);
		}
		Instant started = this.clock.instant();
		ReplayVisitor visitor = new ReplayVisitor(originQueue, limit, started);
		Scanned scanned = scan(visitor);
		if (visitor.moved > 0 || !visitor.stayed.isEmpty()) {
			logger.info("Replayed " + visitor.moved + " parked message(s) from '" + this.parkingLot + "'"
					+ ((originQueue != null) ? " that failed on '" + originQueue + "'" : "") + "; "
					+ visitor.stayed.size() + " stayed " + visitor.stayedByReason());
		}
		List<ReplayResult.StayedMessage> listed = visitor.stayed.subList(0,
				Math.min(visitor.stayed.size(), MAX_LISTED_STAYED));
		return new ReplayResult(visitor.moved, visitor.stayed.size(), visitor.stayedByReason(), listed,
				scanned.count());
	}

	/**
	 * Remove parked messages for good.
	 * @param originQueue only messages that failed on this queue, or {@code null} for all
	 * @return how many were removed
	 */
	public long purge(@Nullable String originQueue) {
		if (originQueue == null) {
			return purgeAll();
		}
		long[] purged = { 0 };
		scan(new Visitor() {

			@Override
			public boolean wantsMore() {
				return true;
			}

			@Override
			public Decision visit(GetResponse message) {
				if (isFrom(message, originQueue)) {
					purged[0]++;
					return Decision.REMOVE;
				}
				return Decision.KEEP;
			}

		});
		logger.info("Purged " + purged[0] + " parked message(s) that failed on '" + originQueue + "' from '"
				+ this.parkingLot + "'");
		return purged[0];
	}

	private long purgeAll() {
		this.operationLock.lock();
		Connection connection = null;
		Channel cached = null;
		try {
			connection = this.connectionFactory.createConnection();
			cached = connection.createChannel(false);
			long purged = RealChannels.target(cached).queuePurge(this.parkingLot).getMessageCount();
			logger.info("Purged " + purged + " parked message(s) from '" + this.parkingLot + "'");
			return purged;
		}
		catch (IOException ex) {
			throw brokerFailure(ex);
		}
		finally {
			RealChannels.closeForGood(cached);
			RabbitUtils.closeConnection(connection);
			this.operationLock.unlock();
		}
	}

	private Scanned scan(Visitor visitor) {
		this.operationLock.lock();
		Connection connection = null;
		Channel cached = null;
		long highestHeld = 0;
		try {
			connection = this.connectionFactory.createConnection();
			cached = connection.createChannel(false);
			// Every get, ack and nack on the one channel that delivered: a delivery tag means nothing on
			// another, and the cached-channel proxy would silently swap in a new channel if this one died.
			Channel channel = RealChannels.target(cached);
			long depth = channel.queueDeclarePassive(this.parkingLot).getMessageCount();
			int count = 0;
			while (count < depth && visitor.wantsMore()) {
				GetResponse message = channel.basicGet(this.parkingLot, false);
				if (message == null) {
					break;
				}
				count++;
				long deliveryTag = message.getEnvelope().getDeliveryTag();
				Decision decision = visitor.visit(message);
				if (decision == Decision.REMOVE) {
					channel.basicAck(deliveryTag, false);
				}
				else {
					highestHeld = deliveryTag;
					if (decision == Decision.KEEP_AND_STOP) {
						break;
					}
				}
			}
			if (highestHeld > 0) {
				// nack, not reject: RabbitMQ 4 does not count a nack as a failed delivery of a quorum queue message.
				channel.basicNack(highestHeld, true, true);
			}
			return new Scanned(depth, count);
		}
		catch (IOException ex) {
			throw brokerFailure(ex);
		}
		finally {
			// Never back to the channel cache: a physical close makes the broker requeue anything still held,
			// should the nack above not have been sent.
			RealChannels.closeForGood(cached);
			RabbitUtils.closeConnection(connection);
			this.operationLock.unlock();
		}
	}

	private RuntimeException brokerFailure(IOException ex) {
		if (ex.getCause() instanceof ShutdownSignalException signal
				&& RabbitUtils.isPassiveDeclarationChannelClose(signal)) {
			return new IllegalStateException("The parking lot '" + this.parkingLot + "' does not exist on the broker",
					ex);
		}
		return new AmqpIOException(ex);
	}

	private static boolean isFrom(GetResponse message, @Nullable String originQueue) {
		return originQueue == null || originQueue.equals(text(headers(message.getProps()).get(RetryHeaders.QUEUE)));
	}

	static ParkedMessage describe(GetResponse message) {
		AMQP.BasicProperties properties = message.getProps();
		Map<String, Object> headers = headers(properties);
		byte[] body = (message.getBody() != null) ? message.getBody() : new byte[0];
		return new ParkedMessage(properties.getMessageId(), text(headers.get(RetryHeaders.QUEUE)),
				RetryHeaderValues.count(headers.get(RetryHeaders.COUNT)),
				HeaderChanges.parkedReasonOf(headers).value(), text(headers.get(RetryHeaders.EXCEPTION)),
				text(headers.get(RetryHeaders.ERROR)),
				RetryHeaderValues.epochMillis(headers.get(RetryHeaders.FIRST_FAILURE)),
				RetryHeaderValues.epochMillis(headers.get(RetryHeaders.PARKED_AT)),
				RetryHeaderValues.count(headers.get(REPLAY_COUNT)), properties.getContentType(), body.length,
				BodyPreview.of(body, properties.getContentEncoding(), PREVIEW_LENGTH));
	}

	/**
	 * The properties of a replayed message: as parked, without the headers of its previous retry cycle,
	 * with {@code retry-count} 0 and the replay recorded.
	 * @param parked the parked message's properties
	 * @param now the time of the replay
	 * @return the properties to publish
	 */
	static AMQP.BasicProperties replayProperties(AMQP.BasicProperties parked, Instant now) {
		Map<String, Object> headers = new LinkedHashMap<>(headers(parked));
		long replays = RetryHeaderValues.count(headers.get(REPLAY_COUNT));
		headers.keySet().removeAll(RESET_ON_REPLAY);
		// Explicitly 0 rather than absent, so that nothing derives a count from the broker's x-death.
		headers.put(RetryHeaders.COUNT, 0L);
		headers.put(REPLAY_COUNT, replays + 1);
		headers.put(REPLAYED_AT, now.toEpochMilli());
		return parked.builder().headers(headers).build();
	}

	private static Map<String, Object> headers(AMQP.BasicProperties properties) {
		return (properties.getHeaders() != null) ? properties.getHeaders() : Map.of();
	}

	private static @Nullable String text(@Nullable Object value) {
		return (value != null) ? value.toString() : null;
	}

	/**
	 * Publishes a replayed message to its origin queue and waits for the broker's confirm.
	 */
	@FunctionalInterface
	interface Replayer {

		/**
		 * Publish.
		 * @param queue the origin queue
		 * @param properties the properties
		 * @param body the body
		 * @throws ForwardFailedException when the publish was returned, nacked or not confirmed
		 */
		void publish(String queue, AMQP.BasicProperties properties, byte[] body);

	}

	private enum Decision {

		/** Leave the message parked (requeued at the end of the operation). */
		KEEP,

		/** Ack the message: it is gone from the parking lot. */
		REMOVE,

		/** Leave the message parked and look at no further message. */
		KEEP_AND_STOP

	}

	private interface Visitor {

		boolean wantsMore();

		Decision visit(GetResponse message);

	}

	private record Scanned(long depth, int count) {
	}

	private final class ReplayVisitor implements Visitor {

		private final @Nullable String originQueue;

		private final @Nullable Integer limit;

		private final Instant started;

		private int attempted;

		private int moved;

		private final List<ReplayResult.StayedMessage> stayed = new ArrayList<>();

		ReplayVisitor(@Nullable String originQueue, @Nullable Integer limit, Instant started) {
			this.originQueue = originQueue;
			this.limit = limit;
			this.started = started;
		}

		@Override
		public boolean wantsMore() {
			return this.limit == null || this.attempted < this.limit;
		}

		@Override
		public Decision visit(GetResponse message) {
			Map<String, Object> headers = headers(message.getProps());
			Instant replayedAt = RetryHeaderValues.epochMillis(headers.get(REPLAYED_AT));
			if (replayedAt != null && !replayedAt.isBefore(this.started)) {
				// Replayed by this very operation and parked again: everything from here on is newer.
				return Decision.KEEP_AND_STOP;
			}
			if (!isFrom(message, this.originQueue)) {
				return Decision.KEEP;
			}
			this.attempted++;
			String messageId = message.getProps().getMessageId();
			String origin = text(headers.get(RetryHeaders.QUEUE));
			if (origin == null || origin.isEmpty()) {
				this.stayed.add(new ReplayResult.StayedMessage(messageId, null, NO_ORIGIN_QUEUE, null));
				return Decision.KEEP;
			}
			try {
				ParkingLotService.this.replayer.publish(origin,
						replayProperties(message.getProps(), ParkingLotService.this.clock.instant()),
						message.getBody());
				this.moved++;
				return Decision.REMOVE;
			}
			catch (ForwardFailedException ex) {
				if (ex.getKind() == ForwardFailedException.Kind.RETURNED) {
					this.stayed.add(new ReplayResult.StayedMessage(messageId, origin, ORIGIN_QUEUE_MISSING,
							ex.getMessage()));
					return Decision.KEEP;
				}
				logger.warn("Replay from '" + ParkingLotService.this.parkingLot + "' stopped: " + ex.getMessage());
				this.stayed.add(new ReplayResult.StayedMessage(messageId, origin, PUBLISH_FAILED, ex.getMessage()));
				return Decision.KEEP_AND_STOP;
			}
		}

		Map<String, Integer> stayedByReason() {
			Map<String, Integer> counts = new TreeMap<>();
			this.stayed.forEach((message) -> counts.merge(message.reason(), 1, Integer::sum));
			return counts;
		}

	}

}
