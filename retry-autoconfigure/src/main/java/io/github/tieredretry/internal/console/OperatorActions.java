package io.github.tieredretry.internal.console;

import java.security.Principal;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.tieredretry.event.ParkedMessagesExpiredEvent;
import io.github.tieredretry.parkinglot.ParkingLotRequest;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.parkinglot.PurgeResult;
import io.github.tieredretry.parkinglot.ReplayPreview;
import io.github.tieredretry.parkinglot.ReplayStatus;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.audit.listener.AuditApplicationEvent;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.event.EventListener;
import org.springframework.util.ClassUtils;

/**
 * What an operator does from the console or the {@code retry} endpoint: replay parked
 * messages (or try a dry run), stop a replay, purge, pause or resume a listener. The one
 * way both reach those actions, so that each is recorded with its author: logged at INFO
 * and, where Spring Boot Actuator is on the classpath, published as an
 * {@link AuditApplicationEvent}, which Spring Boot stores in the application's
 * {@code AuditEventRepository} (and shows at {@code /actuator/auditevents}) when it has
 * one. The author is the request's principal ({@code anonymous} without one). An action
 * that is refused (a bad parameter, a replay already running) changes nothing and is not
 * recorded. The retention's removals are recorded too, under the author
 * {@value #RETENTION_AUTHOR}.
 */
public final class OperatorActions {

	/** Audit event type of a replay started, or of its dry run. */
	public static final String REPLAY = "RETRY_REPLAY";

	/** Audit event type of the end of a replay started in the background. */
	public static final String REPLAY_ENDED = "RETRY_REPLAY_ENDED";

	/** Audit event type of a replay stopped by an operator. */
	public static final String REPLAY_STOP = "RETRY_REPLAY_STOP";

	/** Audit event type of a purge, or of its dry run. */
	public static final String PURGE = "RETRY_PURGE";

	/** Audit event type of a listener paused (its breaker forced open). */
	public static final String LISTENER_PAUSE = "RETRY_LISTENER_PAUSE";

	/** Audit event type of a listener resumed (its breaker closed). */
	public static final String LISTENER_RESUME = "RETRY_LISTENER_RESUME";

	/** Audit event type of parked messages the retention removed. */
	public static final String RETENTION = "RETRY_RETENTION";

	/** The author of the retention's removals. */
	public static final String RETENTION_AUTHOR = "retention";

	/** The author of an action taken without a principal. */
	public static final String ANONYMOUS = "anonymous";

	private static final Log logger = LogFactory.getLog(OperatorActions.class);

	private static final boolean AUDIT_EVENTS = ClassUtils.isPresent(
			"org.springframework.boot.actuate.audit.listener.AuditApplicationEvent",
			OperatorActions.class.getClassLoader());

	private final ParkingLotService parkingLot;

	private final RetryOverview overview;

	private final ApplicationEventPublisher events;

	/**
	 * Create the actions.
	 * @param parkingLot the parking lot
	 * @param overview the listeners and their breakers
	 * @param events where audit events are published
	 */
	public OperatorActions(ParkingLotService parkingLot, RetryOverview overview, ApplicationEventPublisher events) {
		this.parkingLot = parkingLot;
		this.overview = overview;
		this.events = events;
	}

	/**
	 * Start a replay in the background, or say what it would move ({@code dryRun}).
	 * @param author who asks, or {@code null} when the request has no principal
	 * @param via {@code console} or {@code endpoint}
	 * @param request the filter, limit and dry run
	 * @return the {@link ReplayStatus} as the replay starts, or the dry run's
	 * {@link ReplayPreview}
	 */
	public Object replay(@Nullable Principal author, String via, ParkingLotRequest request) {
		String name = name(author);
		Map<String, Object> data = selection(via, request);
		data.put("limit", (request.limit() != null) ? request.limit() : "all");
		if (request.dryRun()) {
			ReplayPreview preview = this.parkingLot.previewReplay(request.filter(), request.limit(),
					request.scanLimitOrDefault());
			data.put("wouldMove", preview.wouldMove());
			data.put("wouldStay", preview.wouldStay());
			record(name, REPLAY, data);
			return preview;
		}
		ReplayStatus started = this.parkingLot.startReplay(request.filter(), request.limit(),
				(ended) -> replayEnded(name, via, ended));
		data.put("replay", started.id());
		record(name, REPLAY, data);
		return started;
	}

	/**
	 * Stop the replay running in the background.
	 * @param author who asks, or {@code null}
	 * @param via {@code console} or {@code endpoint}
	 * @return its status, or {@code null} when no replay was started
	 */
	public @Nullable ReplayStatus stopReplay(@Nullable Principal author, String via) {
		ReplayStatus status = this.parkingLot.stopReplay();
		if (status != null) {
			Map<String, Object> data = new LinkedHashMap<>();
			data.put("via", via);
			data.put("parkingLot", this.parkingLot.parkingLot());
			data.put("replay", status.id());
			data.put("state", status.state());
			record(name(author), REPLAY_STOP, data);
		}
		return status;
	}

	/**
	 * Purge matching parked messages, or say what would be removed ({@code dryRun}).
	 * @param author who asks, or {@code null}
	 * @param via {@code console} or {@code endpoint}
	 * @param request the filter, dry run and {@code all}
	 * @return what was, or would be, removed
	 */
	public PurgeResult purge(@Nullable Principal author, String via, ParkingLotRequest request) {
		PurgeResult result = this.parkingLot.purgeAsRequested(request);
		Map<String, Object> data = selection(via, request);
		data.put("matched", result.matched());
		data.put("purged", result.purged());
		record(name(author), PURGE, data);
		return result;
	}

	/**
	 * Pause a listener (its breaker forced open until resumed) or resume it.
	 * @param author who asks, or {@code null}
	 * @param via {@code console} or {@code endpoint}
	 * @param listenerOrQueue the listener's name or a queue it consumes
	 * @param state {@code open} or {@code closed}
	 * @return the breaker as it is now
	 * @see RetryOverview#changeBreaker(String, String)
	 */
	public RetryOverview.Breaker changeBreaker(@Nullable Principal author, String via, String listenerOrQueue,
			@Nullable String state) {
		RetryOverview.Breaker breaker = this.overview.changeBreaker(listenerOrQueue, state);
		Map<String, Object> data = new LinkedHashMap<>();
		data.put("via", via);
		data.put("listener", listenerOrQueue);
		data.put("state", breaker.state());
		record(name(author), "open".equals(state) ? LISTENER_PAUSE : LISTENER_RESUME, data);
		return breaker;
	}

	/**
	 * Record what the retention removed ({@code retry.retention.*}), as an action of its
	 * own author.
	 * @param event what was removed
	 */
	@EventListener
	public void onParkedMessagesExpired(ParkedMessagesExpiredEvent event) {
		Map<String, Object> data = new LinkedHashMap<>();
		data.put("parkingLot", event.parkingLot());
		data.put("olderThanMaxAge", event.olderThanMaxAge());
		data.put("beyondMaxCount", event.beyondMaxCount());
		data.put("maxAge", String.valueOf(event.maxAge()));
		data.put("maxCount", String.valueOf(event.maxCount()));
		record(RETENTION_AUTHOR, RETENTION, data);
	}

	private void replayEnded(String name, String via, ReplayStatus ended) {
		Map<String, Object> data = new LinkedHashMap<>();
		data.put("via", via);
		data.put("parkingLot", this.parkingLot.parkingLot());
		data.put("replay", ended.id());
		data.put("state", ended.state());
		data.put("moved", ended.moved());
		data.put("stayed", ended.stayed());
		record(name, REPLAY_ENDED, data);
	}

	private Map<String, Object> selection(String via, ParkingLotRequest request) {
		Map<String, Object> data = new LinkedHashMap<>();
		data.put("via", via);
		data.put("parkingLot", this.parkingLot.parkingLot());
		data.put("filter", request.filter().toString());
		data.put("dryRun", request.dryRun());
		return data;
	}

	private void record(String author, String type, Map<String, Object> data) {
		logger.info("Operator '" + author + "': " + type + " " + data);
		if (AUDIT_EVENTS) {
			this.events.publishEvent(AuditEvents.of(author, type, data));
		}
	}

	/** Kept apart, so that Actuator's class is loaded only where it is present. */
	private static final class AuditEvents {

		static Object of(String author, String type, Map<String, Object> data) {
			return new AuditApplicationEvent(author, type, data);
		}

	}

	private static String name(@Nullable Principal author) {
		return (author != null && author.getName() != null && !author.getName().isBlank()) ? author.getName()
				: ANONYMOUS;
	}

}
