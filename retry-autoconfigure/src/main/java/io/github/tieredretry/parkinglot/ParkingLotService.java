package io.github.tieredretry.parkinglot;

import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import io.github.tieredretry.event.MessageReplayedEvent;
import io.github.tieredretry.event.RetryEventPublisher;
import io.github.tieredretry.forwarding.MessageForwarder;
import io.github.tieredretry.headers.RetryHeaderValues;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.observation.RetryObservations;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.rabbit.connection.ConnectionFactory;

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
 * Every argument is checked; a request that cannot be served fails with a
 * {@link ParkingLotRequestException} that says why. This class is the façade: peek and
 * groups are here, replays live in {@link ParkingLotReplays} (each one a
 * {@link ReplayRun}) and purges in {@link ParkingLotPurges}.
 */
public final class ParkingLotService implements AutoCloseable {

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

	private final ParkingLotReplays replays;

	private final ParkingLotPurges purges;

	private final ParkingLotExpiry expiry;

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

	/**
	 * Create a service for a parking lot whose replays are observed and published, one
	 * {@link MessageReplayedEvent} per replayed message.
	 * @param connectionFactory the connection factory to read the parking lot with
	 * @param parkingLot the parking lot's queue
	 * @param forwarder publishes replayed messages to their origin queue, confirmed
	 * @param replaySettings how fast replays go
	 * @param observations observes the publish of each replayed message
	 * @param events where each replayed message is published, once the broker confirmed
	 * it
	 * @param clock the clock
	 */
	public ParkingLotService(ConnectionFactory connectionFactory, String parkingLot, MessageForwarder forwarder,
			ReplaySettings replaySettings, RetryObservations observations, RetryEventPublisher events, Clock clock) {
		this(connectionFactory, parkingLot, publishing(forwarder::toQueue, events), replaySettings, observations,
				clock);
	}

	ParkingLotService(ConnectionFactory connectionFactory, String parkingLot, Replayer replayer,
			ReplaySettings replaySettings, RetryObservations observations, Clock clock) {
		this.scanner = new ParkingLotScanner(connectionFactory, parkingLot);
		this.replays = new ParkingLotReplays(this.scanner, replayer, replaySettings, observations, clock);
		this.purges = new ParkingLotPurges(this.scanner);
		this.expiry = new ParkingLotExpiry(this.scanner, clock);
	}

	private static Replayer publishing(Replayer replayer, RetryEventPublisher events) {
		return (queue, properties, body) -> {
			replayer.publish(queue, properties, body);
			Object replays = ParkedMessages.headers(properties).get(RetryHeaders.REPLAY_COUNT);
			events
				.publish(new MessageReplayedEvent(queue, RetryHeaderValues.count(replays), properties.getMessageId()));
		};
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
		return this.replays.replaySettings();
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
		return this.purges.purgeAsRequested(request);
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
		ParkedMessageLooker.checkRange("limit", limit, MAX_PEEK_LIMIT);
		ParkedMessageLooker.checkRange("scanLimit", scanLimit, MAX_SCAN_LIMIT);
		List<ParkedMessage> messages = new ArrayList<>();
		ParkingLotScanner.Pass pass = this.scanner.pass(scanLimit, new ParkedMessageLooker(filter, messages::add) {

			@Override
			public boolean wantsMore() {
				return messages.size() < limit;
			}

		});
		return new PeekResult(parkingLot(), pass.depth(), pass.count(),
				messages.size() < limit && ParkedMessageLooker.isPartial(pass, scanLimit), messages);
	}

	/**
	 * The matching parked messages grouped by how they failed, largest group first.
	 * @param filter which messages
	 * @param scanLimit the most messages to look at, 1 to {@value #MAX_SCAN_LIMIT}
	 * @return the groups
	 * @throws ParkingLotRequestException when the scan limit is out of range
	 */
	public FailureGroups groups(ParkedMessageFilter filter, int scanLimit) {
		ParkedMessageLooker.checkRange("scanLimit", scanLimit, MAX_SCAN_LIMIT);
		Map<String, FailureGroup> groups = new LinkedHashMap<>();
		ParkingLotScanner.Pass pass = this.scanner.pass(scanLimit, new ParkedMessageLooker(filter, (message) -> groups
			.merge(message.group(), FailureGroup.of(message), (group, one) -> group.with(message))));
		List<FailureGroup> largestFirst = new ArrayList<>(groups.values());
		largestFirst.sort(Comparator.comparingLong(FailureGroup::count).reversed());
		return new FailureGroups(parkingLot(), pass.depth(), pass.count(),
				ParkedMessageLooker.isPartial(pass, scanLimit), largestFirst);
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
		return this.replays.replayMatching(filter, limit);
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
		return startReplay(filter, limit, (status) -> {
		});
	}

	/**
	 * Start a replay in the background, and be told when it ends.
	 * @param filter which messages
	 * @param limit the most messages to try, or {@code null} for all
	 * @param whenEnded called with its final status (finished, stopped or failed), on the
	 * replay's thread
	 * @return the replay's status as it starts
	 * @throws ParkingLotRequestException when the limit is less than 1
	 * @throws ReplayInProgressException when another replay runs
	 */
	public ReplayStatus startReplay(ParkedMessageFilter filter, @Nullable Integer limit,
			Consumer<ReplayStatus> whenEnded) {
		return this.replays.startReplay(filter, limit, whenEnded);
	}

	/**
	 * The replay running in the background, or the last one.
	 * @return its status, or {@code null} if no replay was started in the background
	 */
	public @Nullable ReplayStatus replayStatus() {
		return this.replays.replayStatus();
	}

	/**
	 * Stop the replay running in the background: it publishes nothing more, and every
	 * message it has not moved stays parked. It ends within moments (at most the confirm
	 * timeout of a publish on its way).
	 * @return its status, or {@code null} if no replay was started in the background
	 */
	public @Nullable ReplayStatus stopReplay() {
		return this.replays.stopReplay();
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
		return this.replays.previewReplay(filter, limit, scanLimit);
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
		return this.purges.purgeMatching(filter);
	}

	/**
	 * What a purge would remove (a dry run): nothing is removed.
	 * @param filter which messages
	 * @param scanLimit the most messages to look at, 1 to {@value #MAX_SCAN_LIMIT}
	 * @return what would be removed
	 * @throws ParkingLotRequestException when the scan limit is out of range
	 */
	public PurgeResult previewPurge(ParkedMessageFilter filter, int scanLimit) {
		return this.purges.previewPurge(filter, scanLimit);
	}

	/**
	 * Remove, for good, the parked messages that the retention limits no longer keep:
	 * those parked longer ago than the maximum age, and the oldest beyond the maximum
	 * count. {@link ParkingLotRetention} calls it periodically when
	 * {@code retry.retention.*} sets a limit.
	 * @param limits the limits
	 * @return what was removed
	 */
	public RetentionResult removeExpired(RetentionLimits limits) {
		return this.expiry.removeExpired(limits);
	}

	/**
	 * Stop a replay running in the background; everything it has not moved stays parked.
	 */
	@Override
	public void close() {
		this.replays.close();
	}

}
