package io.github.tieredretry.parkinglot;

import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

/**
 * Looks at, groups, replays and purges parked messages, without ever losing one; the
 * starter provides one as a bean.
 * <p>
 * Every operation reads the parking lot with {@code basic.get} and manual
 * acknowledgement, looking at no more messages than the parking lot held when it started;
 * messages it does not take out are held unacknowledged and requeued when it is done. A
 * replayed message is acked only after its publish to the origin queue has been
 * confirmed: a crash in between can duplicate it, never lose it. Replays move at most
 * {@link ReplaySettings#rate()} messages per second, in passes of at most
 * {@link ReplaySettings#batchSize()} messages, so that a long replay never holds messages
 * for long; a replay in the background ({@link #startReplay}) can be watched and stopped.
 * <p>
 * Every argument is checked; a request that cannot be served fails with a
 * {@link ParkingLotRequestException} that says why.
 */
public interface ParkingLotService extends AutoCloseable {

	/** How many parked messages a peek returns unless told otherwise. */
	int DEFAULT_PEEK_LIMIT = 20;

	/** The most parked messages one peek returns. */
	int MAX_PEEK_LIMIT = 200;

	/**
	 * How many parked messages a peek, a grouping or a dry run looks at, at most, unless
	 * told otherwise.
	 */
	int DEFAULT_SCAN_LIMIT = 10_000;

	/** The highest scan limit. */
	int MAX_SCAN_LIMIT = 1_000_000;

	/**
	 * The parking lot's queue.
	 * @return its name
	 */
	String parkingLot();

	/**
	 * How fast replays go.
	 * @return the settings
	 */
	ReplaySettings replaySettings();

	/**
	 * The oldest matching parked messages, left where they are.
	 * @param request the filter, {@code limit} (default {@value #DEFAULT_PEEK_LIMIT}) and
	 * {@code scanLimit}
	 * @return the messages
	 * @throws ParkingLotRequestException when a limit is out of range
	 */
	default PeekResult peek(ParkingLotRequest request) {
		return peek(request.filter(), (request.limit() != null) ? request.limit() : DEFAULT_PEEK_LIMIT,
				request.scanLimitOrDefault());
	}

	/**
	 * The matching parked messages grouped by how they failed.
	 * @param request the filter and {@code scanLimit}
	 * @return the groups
	 * @throws ParkingLotRequestException when the scan limit is out of range
	 */
	default FailureGroups groups(ParkingLotRequest request) {
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
	PurgeResult purgeAsRequested(ParkingLotRequest request);

	/**
	 * The oldest parked messages that failed on a queue, left where they are.
	 * @param originQueue only messages that failed on this queue, or {@code null} for all
	 * @param limit the most messages to return, 1 to {@value #MAX_PEEK_LIMIT}
	 * @return the messages
	 * @throws ParkingLotRequestException when the limit is out of range
	 */
	default PeekResult peek(@Nullable String originQueue, int limit) {
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
	PeekResult peek(ParkedMessageFilter filter, int limit, int scanLimit);

	/**
	 * The matching parked messages grouped by how they failed, largest group first.
	 * @param filter which messages
	 * @param scanLimit the most messages to look at, 1 to {@value #MAX_SCAN_LIMIT}
	 * @return the groups
	 * @throws ParkingLotRequestException when the scan limit is out of range
	 */
	FailureGroups groups(ParkedMessageFilter filter, int scanLimit);

	/**
	 * Move the parked messages that failed on a queue back to it, in the calling thread.
	 * @param originQueue only messages that failed on this queue, or {@code null} for all
	 * @param limit the most messages to try, or {@code null} for all
	 * @return how many moved and how many stayed, and why
	 * @see #replayMatching(ParkedMessageFilter, Integer)
	 */
	default ReplayResult replay(@Nullable String originQueue, @Nullable Integer limit) {
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
	ReplayResult replayMatching(ParkedMessageFilter filter, @Nullable Integer limit);

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
	default ReplayStatus startReplay(ParkedMessageFilter filter, @Nullable Integer limit) {
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
	ReplayStatus startReplay(ParkedMessageFilter filter, @Nullable Integer limit, Consumer<ReplayStatus> whenEnded);

	/**
	 * The replay running in the background, or the last one.
	 * @return its status, or {@code null} if no replay was started in the background
	 */
	@Nullable ReplayStatus replayStatus();

	/**
	 * Stop the replay running in the background: it publishes nothing more, and every
	 * message it has not moved stays parked. It ends within moments (at most the confirm
	 * timeout of a publish on its way).
	 * @return its status, or {@code null} if no replay was started in the background
	 */
	@Nullable ReplayStatus stopReplay();

	/**
	 * What a replay would move (a dry run): nothing is moved.
	 * @param filter which messages
	 * @param limit the most messages to try, or {@code null} for all
	 * @param scanLimit the most messages to look at, 1 to {@value #MAX_SCAN_LIMIT}
	 * @return what would move and what would stay
	 * @throws ParkingLotRequestException when a limit is out of range
	 */
	ReplayPreview previewReplay(ParkedMessageFilter filter, @Nullable Integer limit, int scanLimit);

	/**
	 * Remove the parked messages that failed on a queue for good.
	 * @param originQueue only messages that failed on this queue, or {@code null} for all
	 * @return how many were removed
	 */
	default long purge(@Nullable String originQueue) {
		return purgeMatching(ParkedMessageFilter.forQueue(originQueue)).purged();
	}

	/**
	 * Remove matching parked messages for good. The empty filter purges the whole parking
	 * lot, including messages other applications parked there if they share it.
	 * @param filter which messages
	 * @return what was removed
	 */
	PurgeResult purgeMatching(ParkedMessageFilter filter);

	/**
	 * What a purge would remove (a dry run): nothing is removed.
	 * @param filter which messages
	 * @param scanLimit the most messages to look at, 1 to {@value #MAX_SCAN_LIMIT}
	 * @return what would be removed
	 * @throws ParkingLotRequestException when the scan limit is out of range
	 */
	PurgeResult previewPurge(ParkedMessageFilter filter, int scanLimit);

	/**
	 * Remove, for good, the parked messages that the retention limits no longer keep:
	 * those parked longer ago than the maximum age, and the oldest beyond the maximum
	 * count. The starter calls it periodically when {@code retry.retention.*} sets a
	 * limit.
	 * @param limits the limits
	 * @return what was removed
	 */
	RetentionResult removeExpired(RetentionLimits limits);

	/**
	 * Stop a replay running in the background; everything it has not moved stays parked.
	 */
	@Override
	void close();

}
