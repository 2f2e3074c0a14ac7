package io.github.tieredretry.internal.actuate;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NoSuchElementException;

import io.github.tieredretry.internal.console.OperatorActions;
import io.github.tieredretry.internal.console.RetryOverview;
import io.github.tieredretry.parkinglot.ParkingLotRequest;
import io.github.tieredretry.parkinglot.ParkingLotRequestException;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.parkinglot.ReplayInProgressException;
import io.github.tieredretry.parkinglot.ReplayStatus;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * {@link Endpoint @Endpoint} to see the retry tiers, the parking lot and the retryable
 * listeners, and to work on the parking lot. Over HTTP ({@link RetryEndpointWebExtension}
 * gives the status codes):
 * <ul>
 * <li>{@code GET /actuator/retry}: tiers, parking lot, listeners with their effective
 * policy, the replay;</li>
 * <li>{@code GET /actuator/retry/parking-lot}: the oldest parked messages, left
 * parked;</li>
 * <li>{@code GET /actuator/retry/parking-lot/groups}: the parked messages grouped by how
 * they failed;</li>
 * <li>{@code GET /actuator/retry/parking-lot/replay}: the replay running in the
 * background, or the last;</li>
 * <li>{@code POST /actuator/retry/parking-lot/replay}: start a replay (or a dry
 * run);</li>
 * <li>{@code DELETE /actuator/retry/parking-lot/replay}: stop the replay;</li>
 * <li>{@code DELETE /actuator/retry/parking-lot}: purge parked messages (or a dry
 * run);</li>
 * <li>{@code POST /actuator/retry/breakers/{listener or queue}} with {@code state=open}
 * or {@code closed}: pause a listener that has a circuit breaker until it is closed, or
 * resume it now.</li>
 * </ul>
 * Every parking-lot operation takes the filter parameters {@code queue}, {@code group},
 * {@code exception}, {@code reason}, {@code parkedAfter}, {@code parkedBefore} and
 * {@code messageId} (see {@link ParkingLotRequest}); they are checked once, by
 * {@link ParkingLotRequest} and the {@link ParkingLotService}.
 */
@Endpoint(id = "retry")
public class RetryEndpoint {

	/** The only resource below the endpoint. */
	static final String PARKING_LOT = "parking-lot";

	/** The failure groups of the parking lot. */
	static final String GROUPS = "groups";

	/** The replay of the parking lot. */
	static final String REPLAY = "replay";

	/** Retried, parked and replayed messages per hour of the last 24 hours. */
	static final String TRENDS = "trends";

	/** The listeners' circuit breakers. */
	static final String BREAKERS = "breakers";

	/** How operator actions taken here are told apart in their audit events. */
	static final String VIA = "endpoint";

	private final RetryOverview overview;

	private final ParkingLotService parkingLot;

	private final OperatorActions actions;

	/**
	 * Create the endpoint.
	 * @param overview describes the retry set-up
	 * @param parkingLot works on the parking lot
	 * @param actions replays, purges, pauses and resumes, recorded with their author
	 */
	public RetryEndpoint(RetryOverview overview, ParkingLotService parkingLot, OperatorActions actions) {
		this.overview = overview;
		this.parkingLot = parkingLot;
		this.actions = actions;
	}

	/**
	 * The tiers, the parking lot with their current depths, every retryable listener and
	 * the replay.
	 * @return the description
	 */
	@ReadOperation
	public RetryOverview.Description retry() {
		return this.overview.describe();
	}

	/**
	 * Look at the parking lot: its oldest messages ({@code parking-lot}), its failure
	 * groups ({@code parking-lot/groups}) or its replay ({@code parking-lot/replay}); or
	 * at the retried, parked and replayed messages of the last 24 hours ({@code trends}).
	 * @param path the resource
	 * @param limit the most messages to return (default
	 * {@value ParkingLotService#DEFAULT_PEEK_LIMIT}, at most
	 * {@value ParkingLotService#MAX_PEEK_LIMIT})
	 * @param scanLimit the most messages to look at
	 * @param queue only messages that failed on this queue
	 * @param group only messages of this failure group
	 * @param exception only messages that failed with this exception
	 * @param reason only messages parked for this reason
	 * @param parkedAfter only messages parked at or after this time
	 * @param parkedBefore only messages parked before this time
	 * @param messageId only the message with this id
	 * @return the messages, the groups, the replay's status or the trends
	 * @throws UnknownResourceException for another path, or when no replay has run
	 * @throws ParkingLotRequestException when a parameter is invalid
	 */
	@ReadOperation
	public Object parkingLot(@Selector(match = Selector.Match.ALL_REMAINING) String[] path, @Nullable String limit,
			@Nullable String scanLimit, @Nullable String queue, @Nullable String group, @Nullable String exception,
			@Nullable String reason, @Nullable String parkedAfter, @Nullable String parkedBefore,
			@Nullable String messageId) {
		ParkingLotRequest request = request(limit, scanLimit, null, null, queue, group, exception, reason, parkedAfter,
				parkedBefore, messageId);
		return switch (resource(path)) {
			case PARKING_LOT -> this.parkingLot.peek(request);
			case PARKING_LOT + "/" + GROUPS -> this.parkingLot.groups(request);
			case PARKING_LOT + "/" + REPLAY -> replayStatus(this.parkingLot.replayStatus());
			case TRENDS -> this.overview.trends();
			default -> throw unknown(path, "parking-lot, parking-lot/groups, parking-lot/replay or trends");
		};
	}

	/**
	 * Start a replay of matching parked messages in the background
	 * ({@code parking-lot/replay}), or say what it would move ({@code dryRun}); or open
	 * or close a listener's circuit breaker ({@code breakers/{listener or queue}}).
	 * @param path {@code parking-lot/replay}, or {@code breakers} and the listener's name
	 * (URL-encoded: {@code OrderListener%23onOrder}) or a queue it consumes
	 * @param limit the most messages to replay (default: all)
	 * @param scanLimit the most messages a dry run looks at
	 * @param dryRun whether to move nothing and say what would move
	 * @param queue only messages that failed on this queue
	 * @param group only messages of this failure group
	 * @param exception only messages that failed with this exception
	 * @param reason only messages parked for this reason
	 * @param parkedAfter only messages parked at or after this time
	 * @param parkedBefore only messages parked before this time
	 * @param messageId only the message with this id
	 * @param state for a breaker: {@code open} or {@code closed}
	 * @param securityContext who asks (the author of the action's audit event)
	 * @return the replay's status as it starts, the dry run's result, or the breaker as
	 * it is now
	 * @throws UnknownResourceException for another path
	 * @throws ParkingLotRequestException when a parameter is invalid
	 * @throws ReplayInProgressException when a replay runs already
	 * @throws BadRequestException when a breaker's state is neither open nor closed
	 */
	@WriteOperation
	public Object replay(@Selector(match = Selector.Match.ALL_REMAINING) String[] path, @Nullable String limit,
			@Nullable String scanLimit, @Nullable String dryRun, @Nullable String queue, @Nullable String group,
			@Nullable String exception, @Nullable String reason, @Nullable String parkedAfter,
			@Nullable String parkedBefore, @Nullable String messageId, @Nullable String state,
			SecurityContext securityContext) {
		if (path.length >= 2 && path[0].equals(BREAKERS)) {
			return changeBreaker(securityContext, String.join("/", Arrays.copyOfRange(path, 1, path.length)), state);
		}
		if (!resource(path).equals(PARKING_LOT + "/" + REPLAY)) {
			throw unknown(path, "parking-lot/replay or breakers/{listener or queue}");
		}
		ParkingLotRequest request = request(limit, scanLimit, dryRun, null, queue, group, exception, reason,
				parkedAfter, parkedBefore, messageId);
		return this.actions.replay(securityContext.getPrincipal(), VIA, request);
	}

	/**
	 * Purge matching parked messages ({@code parking-lot}; without a filter only with
	 * {@code all=true}), or stop the replay ({@code parking-lot/replay}).
	 * @param path {@code parking-lot} or {@code parking-lot/replay}
	 * @param scanLimit the most messages a dry run looks at
	 * @param dryRun whether to remove nothing and say what would be removed
	 * @param all whether a purge without filter may remove every parked message
	 * @param queue only messages that failed on this queue
	 * @param group only messages of this failure group
	 * @param exception only messages that failed with this exception
	 * @param reason only messages parked for this reason
	 * @param parkedAfter only messages parked at or after this time
	 * @param parkedBefore only messages parked before this time
	 * @param messageId only the message with this id
	 * @param securityContext who asks (the author of the action's audit event)
	 * @return what was purged, or the stopped replay's status
	 * @throws UnknownResourceException for another path, or when no replay has run
	 * @throws ParkingLotRequestException when a parameter is invalid
	 */
	@DeleteOperation
	public Object delete(@Selector(match = Selector.Match.ALL_REMAINING) String[] path, @Nullable String scanLimit,
			@Nullable String dryRun, @Nullable String all, @Nullable String queue, @Nullable String group,
			@Nullable String exception, @Nullable String reason, @Nullable String parkedAfter,
			@Nullable String parkedBefore, @Nullable String messageId, SecurityContext securityContext) {
		return switch (resource(path)) {
			case PARKING_LOT -> this.actions.purge(securityContext.getPrincipal(), VIA, request(null, scanLimit, dryRun,
					all, queue, group, exception, reason, parkedAfter, parkedBefore, messageId));
			case PARKING_LOT + "/" + REPLAY ->
				replayStatus(this.actions.stopReplay(securityContext.getPrincipal(), VIA));
			default -> throw unknown(path, "parking-lot or parking-lot/replay");
		};
	}

	private RetryOverview.Breaker changeBreaker(SecurityContext securityContext, String listenerOrQueue,
			@Nullable String state) {
		try {
			return this.actions.changeBreaker(securityContext.getPrincipal(), VIA, listenerOrQueue, state);
		}
		catch (NoSuchElementException ex) {
			throw new UnknownResourceException(ex.getMessage());
		}
		catch (IllegalArgumentException ex) {
			throw new BadRequestException(ex.getMessage());
		}
	}

	private static ReplayStatus replayStatus(@Nullable ReplayStatus status) {
		if (status == null) {
			throw new UnknownResourceException("No replay has been started since the application started");
		}
		return status;
	}

	private static ParkingLotRequest request(@Nullable String limit, @Nullable String scanLimit,
			@Nullable String dryRun, @Nullable String all, @Nullable String queue, @Nullable String group,
			@Nullable String exception, @Nullable String reason, @Nullable String parkedAfter,
			@Nullable String parkedBefore, @Nullable String messageId) {
		Map<String, @Nullable String> parameters = new LinkedHashMap<>();
		parameters.put("limit", limit);
		parameters.put("scanLimit", scanLimit);
		parameters.put("dryRun", dryRun);
		parameters.put("all", all);
		parameters.put("queue", queue);
		parameters.put("group", group);
		parameters.put("exception", exception);
		parameters.put("reason", reason);
		parameters.put("parkedAfter", parkedAfter);
		parameters.put("parkedBefore", parkedBefore);
		parameters.put("messageId", messageId);
		return ParkingLotRequest.of(parameters);
	}

	private static String resource(String[] path) {
		return String.join("/", path);
	}

	private static UnknownResourceException unknown(String[] path, String known) {
		return new UnknownResourceException(
				"No resource '" + resource(path) + "' below the retry endpoint; use " + known);
	}

	/** A parameter the operation cannot use; over HTTP a {@code 400 Bad Request}. */
	public static class BadRequestException extends RuntimeException {

		BadRequestException(String message) {
			super(message);
		}

	}

	/**
	 * A path below the endpoint that names nothing; over HTTP a {@code 404 Not Found}.
	 */
	public static class UnknownResourceException extends RuntimeException {

		UnknownResourceException(String message) {
			super(message);
		}

	}

}
