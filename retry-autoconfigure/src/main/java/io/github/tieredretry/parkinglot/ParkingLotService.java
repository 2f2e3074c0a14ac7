package io.github.tieredretry.parkinglot;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.GetResponse;
import io.github.tieredretry.forwarding.ForwardFailedException;
import io.github.tieredretry.forwarding.MessageForwarder;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.observation.RetryObservations;
import io.github.tieredretry.parkinglot.ParkingLotScanner.Decision;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Looks at, groups, replays and purges parked messages, without ever losing one.
 * <p>
 * Every operation reads the parking lot with {@code basic.get} and manual
 * acknowledgement, looking at no more messages than the parking lot held when it started;
 * messages it does not take out are held unacknowledged and requeued when it is done (see
 * {@link ParkingLotScanner}). A replayed message is acked only after its publish to the
 * origin queue has been confirmed: a crash in between can duplicate it, never lose it.
 * Replays move at most {@link ReplaySettings#rate()} messages per second, in passes of at
 * most {@link ReplaySettings#batchSize()} messages, so that a long replay never holds
 * messages for long; a replay in the background ({@link #startReplay}) can be watched and
 * stopped.
 * <p>
 * Every argument is checked here; a request that cannot be served fails with a
 * {@link ParkingLotRequestException} that says why.
 */
public final class ParkingLotService implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(ParkingLotService.class);

	/** Header counting how often a message was replayed from the parking lot. */
	public static final String REPLAY_COUNT = RetryHeaders.REPLAY_COUNT;

	/** Header with the time of the message's latest replay, epoch milliseconds. */
	public static final String REPLAYED_AT = RetryHeaders.REPLAYED_AT;

	/**
	 * A replayed message's origin queue does not exist:
	 * {@link StayReason#ORIGIN_QUEUE_MISSING}.
	 */
	public static final String ORIGIN_QUEUE_MISSING = StayReason.ORIGIN_QUEUE_MISSING.value();

	/** A parked message names no origin queue: {@link StayReason#NO_ORIGIN_QUEUE}. */
	public static final String NO_ORIGIN_QUEUE = StayReason.NO_ORIGIN_QUEUE.value();

	/**
	 * A replay's publish was nacked or not confirmed: {@link StayReason#PUBLISH_FAILED}.
	 */
	public static final String PUBLISH_FAILED = StayReason.PUBLISH_FAILED.value();

	/**
	 * RabbitMQ blocks publishing (a resource alarm): {@link StayReason#BROKER_BLOCKED}.
	 */
	public static final String BROKER_BLOCKED = StayReason.BROKER_BLOCKED.value();

	/** How many parked messages a peek returns unless told otherwise. */
	public static final int DEFAULT_PEEK_LIMIT = 20;

	/** The most parked messages one peek returns. */
	public static final int MAX_PEEK_LIMIT = 200;

	/**
	 * How many parked messages a peek, a grouping or a dry run looks at, at most, unless
	 * told otherwise.
	 */
	public static final int DEFAULT_SCAN_LIMIT = 10_000;

	/** The highest scan limit. */
	public static final int MAX_SCAN_LIMIT = 1_000_000;

	private final ParkingLotScanner scanner;

	private final Replayer replayer;

	private final ReplaySettings replaySettings;

	private final RetryObservations observations;

	private final Clock clock;

	/** One replay at a time, in the background or in a caller's thread. */
	private final Semaphore replayPermit = new Semaphore(1);

	private final ExecutorService replayExecutor = Executors
		.newSingleThreadExecutor(daemonThreads("tiered-retry-replay-"));

	private volatile @Nullable BackgroundReplay lastReplay;

	/**
	 * Create a service for a parking lot with the default replay settings.
	 * @param connectionFactory the connection factory to read the parking lot with
	 * @param parkingLot the parking lot's queue
	 * @param forwarder publishes replayed messages to their origin queue, confirmed
	 * @param clock the clock
	 */
	public ParkingLotService(ConnectionFactory connectionFactory, String parkingLot, MessageForwarder forwarder,
			Clock clock) {
		this(connectionFactory, parkingLot, forwarder, ReplaySettings.DEFAULTS, clock);
	}

	/**
	 * Create a service for a parking lot.
	 * @param connectionFactory the connection factory to read the parking lot with
	 * @param parkingLot the parking lot's queue
	 * @param forwarder publishes replayed messages to their origin queue, confirmed
	 * @param replaySettings how fast replays go
	 * @param clock the clock
	 */
	public ParkingLotService(ConnectionFactory connectionFactory, String parkingLot, MessageForwarder forwarder,
			ReplaySettings replaySettings, Clock clock) {
		this(connectionFactory, parkingLot, forwarder, replaySettings, RetryObservations.DISABLED, clock);
	}

	/**
	 * Create a service for a parking lot whose replays are observed.
	 * @param connectionFactory the connection factory to read the parking lot with
	 * @param parkingLot the parking lot's queue
	 * @param forwarder publishes replayed messages to their origin queue, confirmed
	 * @param replaySettings how fast replays go
	 * @param observations observes the publish of each replayed message
	 * @param clock the clock
	 */
	public ParkingLotService(ConnectionFactory connectionFactory, String parkingLot, MessageForwarder forwarder,
			ReplaySettings replaySettings, RetryObservations observations, Clock clock) {
		this(connectionFactory, parkingLot, forwarder::toQueue, replaySettings, observations, clock);
	}

	ParkingLotService(ConnectionFactory connectionFactory, String parkingLot, Replayer replayer,
			ReplaySettings replaySettings, RetryObservations observations, Clock clock) {
		this.scanner = new ParkingLotScanner(connectionFactory, parkingLot);
		this.replayer = replayer;
		this.replaySettings = replaySettings;
		this.observations = observations;
		this.clock = clock;
	}

	/**
	 * The parking lot's queue.
	 * @return its name
	 */
	public String parkingLot() {
		return this.scanner.parkingLot();
	}

	/**
	 * How fast replays go.
	 * @return the settings
	 */
	public ReplaySettings replaySettings() {
		return this.replaySettings;
	}

	/**
	 * The oldest matching parked messages, left where they are.
	 * @param request the filter, {@code limit} (default {@value #DEFAULT_PEEK_LIMIT}) and
	 * {@code scanLimit}
	 * @return the messages
	 * @throws ParkingLotRequestException when a limit is out of range
	 */
	public PeekResult peek(ParkingLotRequest request) {
		return peek(request.filter(), (request.limit() != null) ? request.limit() : DEFAULT_PEEK_LIMIT,
				request.scanLimitOrDefault());
	}

	/**
	 * The matching parked messages grouped by how they failed.
	 * @param request the filter and {@code scanLimit}
	 * @return the groups
	 * @throws ParkingLotRequestException when the scan limit is out of range
	 */
	public FailureGroups groups(ParkingLotRequest request) {
		return groups(request.filter(), request.scanLimitOrDefault());
	}

	/**
	 * Remove matching parked messages for good, or say what would be removed
	 * ({@code dryRun}).
	 * @param request the filter, {@code dryRun}, {@code scanLimit} (of a dry run) and
	 * {@code all}, which a purge without filter needs: the parking lot may be shared with
	 * other applications
	 * @return what was (or would be) removed
	 * @throws ParkingLotRequestException when a purge of everything lacks {@code all}
	 */
	public PurgeResult purgeAsRequested(ParkingLotRequest request) {
		if (request.filter().matchesAll() && !request.all() && !request.dryRun()) {
			throw new ParkingLotRequestException("A purge without a filter removes every parked message of '"
					+ parkingLot() + "', also those of other applications that share it: say all=true to do that, "
					+ "or filter (queue, group, exception, reason, parkedAfter, parkedBefore, messageId)");
		}
		return request.dryRun() ? previewPurge(request.filter(), request.scanLimitOrDefault())
				: purgeMatching(request.filter());
	}

	/**
	 * The oldest parked messages that failed on a queue, left where they are.
	 * @param originQueue only messages that failed on this queue, or {@code null} for all
	 * @param limit the most messages to return, 1 to {@value #MAX_PEEK_LIMIT}
	 * @return the messages
	 * @throws ParkingLotRequestException when the limit is out of range
	 */
	public PeekResult peek(@Nullable String originQueue, int limit) {
		return peek(ParkedMessageFilter.forQueue(originQueue), limit, DEFAULT_SCAN_LIMIT);
	}

	/**
	 * The oldest matching parked messages, left where they are.
	 * @param filter which messages
	 * @param limit the most messages to return, 1 to {@value #MAX_PEEK_LIMIT}
	 * @param scanLimit the most messages to look at, 1 to {@value #MAX_SCAN_LIMIT}
	 * @return the messages
	 * @throws ParkingLotRequestException when a limit is out of range
	 */
	public PeekResult peek(ParkedMessageFilter filter, int limit, int scanLimit) {
		checkRange("limit", limit, MAX_PEEK_LIMIT);
		checkRange("scanLimit", scanLimit, MAX_SCAN_LIMIT);
		List<ParkedMessage> messages = new ArrayList<>();
		ParkingLotScanner.Pass pass = this.scanner.pass(scanLimit, new Looker(filter, messages::add) {

			@Override
			public boolean wantsMore() {
				return messages.size() < limit;
			}

		});
		return new PeekResult(parkingLot(), pass.depth(), pass.count(),
				messages.size() < limit && isPartial(pass, scanLimit), messages);
	}

	/**
	 * The matching parked messages grouped by how they failed, largest group first.
	 * @param filter which messages
	 * @param scanLimit the most messages to look at, 1 to {@value #MAX_SCAN_LIMIT}
	 * @return the groups
	 * @throws ParkingLotRequestException when the scan limit is out of range
	 */
	public FailureGroups groups(ParkedMessageFilter filter, int scanLimit) {
		checkRange("scanLimit", scanLimit, MAX_SCAN_LIMIT);
		Map<String, FailureGroup> groups = new LinkedHashMap<>();
		ParkingLotScanner.Pass pass = this.scanner.pass(scanLimit, new Looker(filter, (message) -> groups
			.merge(message.group(), FailureGroup.of(message), (group, one) -> group.with(message))));
		List<FailureGroup> largestFirst = new ArrayList<>(groups.values());
		largestFirst.sort(Comparator.comparingLong(FailureGroup::count).reversed());
		return new FailureGroups(parkingLot(), pass.depth(), pass.count(), isPartial(pass, scanLimit), largestFirst);
	}

	/**
	 * Move the parked messages that failed on a queue back to it, in the calling thread.
	 * @param originQueue only messages that failed on this queue, or {@code null} for all
	 * @param limit the most messages to try, or {@code null} for all
	 * @return how many moved and how many stayed, and why
	 * @see #replayMatching(ParkedMessageFilter, Integer)
	 */
	public ReplayResult replay(@Nullable String originQueue, @Nullable Integer limit) {
		return replayMatching(ParkedMessageFilter.forQueue(originQueue), limit);
	}

	/**
	 * Move matching parked messages back to the queue whose listener failed, oldest
	 * first, with their retry state reset (a message that fails again starts a fresh
	 * retry cycle), at the replay rate, in the calling thread. A message whose origin
	 * queue no longer exists stays parked. A publish that is nacked or not confirmed
	 * stops the replay (the broker is in trouble): that message and all later ones stay
	 * parked; so do all matching messages when the broker blocks publishing.
	 * @param filter which messages
	 * @param limit the most messages to try, or {@code null} for all
	 * @return how many moved and how many stayed, and why
	 * @throws ParkingLotRequestException when the limit is less than 1
	 * @throws ReplayInProgressException when another replay runs
	 */
	public ReplayResult replayMatching(ParkedMessageFilter filter, @Nullable Integer limit) {
		ReplayRun run = newReplay(filter, limit, new ReplayControl());
		try {
			return logged(run, run.run());
		}
		finally {
			this.replayPermit.release();
		}
	}

	/**
	 * Start a replay in the background; it can be watched with {@link #replayStatus()}
	 * and stopped with {@link #stopReplay()}.
	 * @param filter which messages
	 * @param limit the most messages to try, or {@code null} for all
	 * @return the replay's status as it starts
	 * @throws ParkingLotRequestException when the limit is less than 1
	 * @throws ReplayInProgressException when another replay runs
	 * @see #replayMatching(ParkedMessageFilter, Integer)
	 */
	public ReplayStatus startReplay(ParkedMessageFilter filter, @Nullable Integer limit) {
		ReplayControl control = new ReplayControl();
		ReplayRun run = newReplay(filter, limit, control);
		BackgroundReplay replay = new BackgroundReplay(UUID.randomUUID().toString().substring(0, 8), filter, limit, run,
				control);
		try {
			this.replayExecutor.execute(replay::run);
		}
		catch (RuntimeException ex) {
			this.replayPermit.release();
			throw ex;
		}
		this.lastReplay = replay;
		return replay.status();
	}

	/**
	 * The replay running in the background, or the last one.
	 * @return its status, or {@code null} if no replay was started in the background
	 */
	public @Nullable ReplayStatus replayStatus() {
		BackgroundReplay replay = this.lastReplay;
		return (replay != null) ? replay.status() : null;
	}

	/**
	 * Stop the replay running in the background: it publishes nothing more, and every
	 * message it has not moved stays parked. It ends within moments (at most the confirm
	 * timeout of a publish on its way).
	 * @return its status, or {@code null} if no replay was started in the background
	 */
	public @Nullable ReplayStatus stopReplay() {
		BackgroundReplay replay = this.lastReplay;
		if (replay == null) {
			return null;
		}
		replay.control.stop();
		return replay.status();
	}

	/**
	 * What a replay would move (a dry run): nothing is moved.
	 * @param filter which messages
	 * @param limit the most messages to try, or {@code null} for all
	 * @param scanLimit the most messages to look at, 1 to {@value #MAX_SCAN_LIMIT}
	 * @return what would move and what would stay
	 * @throws ParkingLotRequestException when a limit is out of range
	 */
	public ReplayPreview previewReplay(ParkedMessageFilter filter, @Nullable Integer limit, int scanLimit) {
		checkReplayLimit(limit);
		checkRange("scanLimit", scanLimit, MAX_SCAN_LIMIT);
		int[] wouldMove = { 0 };
		Map<String, Integer> stayedByReason = new TreeMap<>();
		ParkingLotScanner.Pass pass = this.scanner.pass(scanLimit, new Looker(filter, (message) -> {
			if (message.originQueue() != null) {
				wouldMove[0]++;
			}
			else {
				stayedByReason.merge(NO_ORIGIN_QUEUE, 1, Integer::sum);
			}
		}) {

			@Override
			public boolean wantsMore() {
				return limit == null || matched() < limit;
			}

		});
		int wouldStay = stayedByReason.values().stream().mapToInt(Integer::intValue).sum();
		return new ReplayPreview(wouldMove[0], wouldStay, stayedByReason, pass.count(), isPartial(pass, scanLimit));
	}

	/**
	 * Remove the parked messages that failed on a queue for good.
	 * @param originQueue only messages that failed on this queue, or {@code null} for all
	 * @return how many were removed
	 */
	public long purge(@Nullable String originQueue) {
		return purgeMatching(ParkedMessageFilter.forQueue(originQueue)).purged();
	}

	/**
	 * Remove matching parked messages for good. The empty filter purges the whole parking
	 * lot, including messages other applications parked there if they share it.
	 * @param filter which messages
	 * @return what was removed
	 */
	public PurgeResult purgeMatching(ParkedMessageFilter filter) {
		if (filter.matchesAll()) {
			long purged = this.scanner.purgeAll();
			logger.info("Purged " + purged + " parked message(s) from '" + parkingLot() + "'");
			return new PurgeResult(parkingLot(), false, purged, purged, 0, false);
		}
		long[] purged = { 0 };
		ParkingLotScanner.Pass pass = this.scanner.pass(Long.MAX_VALUE, new ParkingLotScanner.Visitor() {

			@Override
			public boolean wantsMore() {
				return true;
			}

			@Override
			public Decision visit(GetResponse message) {
				if (filter.matches(ParkedMessages.describe(message))) {
					purged[0]++;
					return Decision.REMOVE;
				}
				return Decision.KEEP;
			}

		});
		logger.info("Purged " + purged[0] + " parked message(s) matching " + filter + " from '" + parkingLot() + "'");
		return new PurgeResult(parkingLot(), false, purged[0], purged[0], pass.count(), false);
	}

	/**
	 * What a purge would remove (a dry run): nothing is removed.
	 * @param filter which messages
	 * @param scanLimit the most messages to look at, 1 to {@value #MAX_SCAN_LIMIT}
	 * @return what would be removed
	 * @throws ParkingLotRequestException when the scan limit is out of range
	 */
	public PurgeResult previewPurge(ParkedMessageFilter filter, int scanLimit) {
		checkRange("scanLimit", scanLimit, MAX_SCAN_LIMIT);
		Looker looker = new Looker(filter, (message) -> {
		});
		ParkingLotScanner.Pass pass = this.scanner.pass(scanLimit, looker);
		return new PurgeResult(parkingLot(), true, looker.matched(), 0, pass.count(), isPartial(pass, scanLimit));
	}

	/**
	 * Stop a replay running in the background; everything it has not moved stays parked.
	 */
	@Override
	public void close() {
		BackgroundReplay replay = this.lastReplay;
		if (replay != null) {
			replay.control.stop();
		}
		this.replayExecutor.shutdown();
		try {
			this.replayExecutor.awaitTermination(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private ReplayRun newReplay(ParkedMessageFilter filter, @Nullable Integer limit, ReplayControl control) {
		checkReplayLimit(limit);
		if (!this.replayPermit.tryAcquire()) {
			throw new ReplayInProgressException("A replay from '" + parkingLot()
					+ "' is running: wait for it to end, or stop it, before starting another");
		}
		return new ReplayRun(this.scanner::pass, this.replayer, filter, limit, this.replaySettings, control,
				this.observations, this.clock);
	}

	private ReplayResult logged(ReplayRun run, ReplayResult result) {
		if (result.moved() > 0 || result.stayed() > 0 || run.stoppedBecause() != null) {
			logger.info("Replayed " + result.moved() + " parked message(s) matching " + run.filter() + " from '"
					+ parkingLot() + "'; " + result.stayed() + " stayed " + result.stayedByReason()
					+ ((run.stoppedBecause() != null) ? "; stopped: " + run.stoppedBecause() : ""));
		}
		return result;
	}

	private static void checkReplayLimit(@Nullable Integer limit) {
		if (limit != null && limit < 1) {
			throw new ParkingLotRequestException("limit must be at least 1 but was " + limit);
		}
	}

	private static void checkRange(String name, int value, int max) {
		if (value < 1 || value > max) {
			throw new ParkingLotRequestException(name + " must be between 1 and " + max + " but was " + value);
		}
	}

	private static boolean isPartial(ParkingLotScanner.Pass pass, int scanLimit) {
		return pass.count() >= scanLimit && pass.count() < pass.depth();
	}

	private static CustomizableThreadFactory daemonThreads(String prefix) {
		CustomizableThreadFactory threads = new CustomizableThreadFactory(prefix);
		threads.setDaemon(true);
		return threads;
	}

	/**
	 * Publishes a replayed message to its origin queue and waits for the broker's
	 * confirm.
	 */
	@FunctionalInterface
	interface Replayer {

		/**
		 * Publish.
		 * @param queue the origin queue
		 * @param properties the properties
		 * @param body the body
		 * @throws ForwardFailedException when the publish was returned, nacked, blocked
		 * or not confirmed
		 */
		void publish(String queue, AMQP.BasicProperties properties, byte[] body);

	}

	/** Looks at messages without taking any: hands the matching ones on. */
	private static class Looker implements ParkingLotScanner.Visitor {

		private final ParkedMessageFilter filter;

		private final Consumer<ParkedMessage> matching;

		private int matched;

		Looker(ParkedMessageFilter filter, Consumer<ParkedMessage> matching) {
			this.filter = filter;
			this.matching = matching;
		}

		int matched() {
			return this.matched;
		}

		@Override
		public boolean wantsMore() {
			return true;
		}

		@Override
		public Decision visit(GetResponse response) {
			ParkedMessage message = ParkedMessages.describe(response);
			if (this.filter.matches(message)) {
				this.matched++;
				this.matching.accept(message);
			}
			return Decision.KEEP;
		}

	}

	/** A replay in the background. */
	private final class BackgroundReplay {

		private final String id;

		private final ParkedMessageFilter filter;

		private final @Nullable Integer limit;

		private final ReplayRun run;

		private final ReplayControl control;

		private volatile @Nullable Instant endedAt;

		private volatile @Nullable String failure;

		BackgroundReplay(String id, ParkedMessageFilter filter, @Nullable Integer limit, ReplayRun run,
				ReplayControl control) {
			this.id = id;
			this.filter = filter;
			this.limit = limit;
			this.run = run;
			this.control = control;
		}

		void run() {
			try {
				logged(this.run, this.run.run());
			}
			catch (RuntimeException ex) {
				logger.error("Replay " + this.id + " from '" + parkingLot() + "' failed; every message it did not move "
						+ "is still parked", ex);
				this.failure = ex.toString();
			}
			finally {
				this.endedAt = ParkingLotService.this.clock.instant();
				ParkingLotService.this.replayPermit.release();
			}
		}

		ReplayStatus status() {
			ReplayResult progress = this.run.result();
			String failed = this.failure;
			String stoppedBecause = this.run.stoppedBecause();
			String state = (this.endedAt == null) ? ReplayStatus.RUNNING : (failed != null) ? ReplayStatus.FAILED
					: (stoppedBecause != null) ? ReplayStatus.STOPPED : ReplayStatus.FINISHED;
			return new ReplayStatus(this.id, state, this.filter, this.limit,
					ParkingLotService.this.replaySettings.rate(), this.run.started(), this.endedAt, progress.moved(),
					progress.stayed(), progress.stayedByReason(), progress.stayedMessages(), progress.scanned(),
					(failed != null) ? failed : stoppedBecause);
		}

	}

}
