package io.github.tieredretry.internal.actuate;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

import io.github.tieredretry.parkinglot.ParkingLotRequestException;
import io.github.tieredretry.parkinglot.ReplayInProgressException;
import io.github.tieredretry.parkinglot.ReplayStatus;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

/**
 * {@link EndpointWebExtension @EndpointWebExtension} for the {@link RetryEndpoint}: the
 * same operations, with HTTP status codes and the reason in the body of every error:
 * {@code 404} for a path that names nothing, {@code 400} for an invalid parameter,
 * {@code 409} for a replay while another one runs, {@code 202} for a replay started in
 * the background.
 */
@EndpointWebExtension(endpoint = RetryEndpoint.class)
public class RetryEndpointWebExtension {

	private static final int ACCEPTED = 202;

	private final RetryEndpoint delegate;

	public RetryEndpointWebExtension(RetryEndpoint delegate) {
		this.delegate = delegate;
	}

	/**
	 * See {@link RetryEndpoint#parkingLot}.
	 * @param path the resource
	 * @param limit the most messages to return
	 * @param scanLimit the most messages to look at
	 * @param queue only messages that failed on this queue
	 * @param group only messages of this failure group
	 * @param exception only messages that failed with this exception
	 * @param reason only messages parked for this reason
	 * @param parkedAfter only messages parked at or after this time
	 * @param parkedBefore only messages parked before this time
	 * @param messageId only the message with this id
	 * @return the response
	 */
	@ReadOperation
	public WebEndpointResponse<Object> parkingLot(@Selector(match = Selector.Match.ALL_REMAINING) String[] path,
			@Nullable String limit, @Nullable String scanLimit, @Nullable String queue, @Nullable String group,
			@Nullable String exception, @Nullable String reason, @Nullable String parkedAfter,
			@Nullable String parkedBefore, @Nullable String messageId) {
		return respond(WebEndpointResponse.STATUS_OK, () -> this.delegate.parkingLot(path, limit, scanLimit, queue,
				group, exception, reason, parkedAfter, parkedBefore, messageId));
	}

	/**
	 * See {@link RetryEndpoint#replay}; a started replay answers {@code 202 Accepted}.
	 * @param path {@code parking-lot/replay} or {@code breakers/{listener or queue}}
	 * @param limit the most messages to replay
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
	 * @param securityContext who asks
	 * @return the response
	 */
	@WriteOperation
	public WebEndpointResponse<Object> replay(@Selector(match = Selector.Match.ALL_REMAINING) String[] path,
			@Nullable String limit, @Nullable String scanLimit, @Nullable String dryRun, @Nullable String queue,
			@Nullable String group, @Nullable String exception, @Nullable String reason, @Nullable String parkedAfter,
			@Nullable String parkedBefore, @Nullable String messageId, @Nullable String state,
			SecurityContext securityContext) {
		return respond(ACCEPTED, () -> this.delegate.replay(path, limit, scanLimit, dryRun, queue, group, exception,
				reason, parkedAfter, parkedBefore, messageId, state, securityContext));
	}

	/**
	 * See {@link RetryEndpoint#delete}.
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
	 * @param securityContext who asks
	 * @return the response
	 */
	@DeleteOperation
	public WebEndpointResponse<Object> delete(@Selector(match = Selector.Match.ALL_REMAINING) String[] path,
			@Nullable String scanLimit, @Nullable String dryRun, @Nullable String all, @Nullable String queue,
			@Nullable String group, @Nullable String exception, @Nullable String reason, @Nullable String parkedAfter,
			@Nullable String parkedBefore, @Nullable String messageId, SecurityContext securityContext) {
		return respond(WebEndpointResponse.STATUS_OK, () -> this.delegate.delete(path, scanLimit, dryRun, all, queue,
				group, exception, reason, parkedAfter, parkedBefore, messageId, securityContext));
	}

	/**
	 * Run an operation.
	 * @param startedStatus the status of a response that is a running replay's
	 * @param operation the operation
	 * @return its response
	 */
	private static WebEndpointResponse<Object> respond(int startedStatus, Supplier<Object> operation) {
		try {
			Object body = operation.get();
			boolean started = body instanceof ReplayStatus status && status.running();
			return new WebEndpointResponse<>(body, started ? startedStatus : WebEndpointResponse.STATUS_OK);
		}
		catch (RetryEndpoint.UnknownResourceException ex) {
			return error(WebEndpointResponse.STATUS_NOT_FOUND, "Not Found", ex.getMessage());
		}
		catch (ParkingLotRequestException | RetryEndpoint.BadRequestException ex) {
			return error(WebEndpointResponse.STATUS_BAD_REQUEST, "Bad Request", ex.getMessage());
		}
		catch (ReplayInProgressException ex) {
			return error(409, "Conflict", ex.getMessage());
		}
	}

	private static WebEndpointResponse<Object> error(int status, String error, @Nullable String message) {
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("status", status);
		body.put("error", error);
		body.put("message", String.valueOf(message));
		return new WebEndpointResponse<>(body, status);
	}

}
