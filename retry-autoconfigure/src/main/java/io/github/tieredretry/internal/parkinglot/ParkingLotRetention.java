package io.github.tieredretry.internal.parkinglot;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.tieredretry.event.ParkedMessagesExpiredEvent;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.parkinglot.RetentionLimits;
import io.github.tieredretry.parkinglot.RetentionResult;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Keeps the parking lot within its retention limits ({@code retry.retention.*}): at start
 * and then periodically, removes for good the messages parked longer ago than the maximum
 * age and the oldest beyond the maximum count. Each removal is logged at INFO and
 * published as a {@link ParkedMessagesExpiredEvent} (counted by the metrics, recorded as
 * an audit event). Without a limit it does nothing: nothing is removed unless configured.
 */
public final class ParkingLotRetention implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(ParkingLotRetention.class);

	private final ParkingLotService parkingLot;

	private final RetentionLimits limits;

	private final Duration checkInterval;

	private final ApplicationEventPublisher events;

	private final ScheduledExecutorService scheduler;

	private final AtomicBoolean started = new AtomicBoolean();

	/**
	 * Create the retention of a parking lot; {@link #start()} starts it.
	 * @param parkingLot the parking lot
	 * @param limits how long and how many parked messages are kept
	 * @param checkInterval how often the limits are applied
	 * @param events where removals are published
	 */
	public ParkingLotRetention(ParkingLotService parkingLot, RetentionLimits limits, Duration checkInterval,
			ApplicationEventPublisher events) {
		if (checkInterval.isNegative() || checkInterval.isZero()) {
			throw new IllegalArgumentException("checkInterval must be positive but was " + checkInterval);
		}
		this.parkingLot = parkingLot;
		this.limits = limits;
		this.checkInterval = checkInterval;
		this.events = events;
		CustomizableThreadFactory threads = new CustomizableThreadFactory("tiered-retry-retention-");
		threads.setDaemon(true);
		this.scheduler = Executors.newSingleThreadScheduledExecutor(threads);
	}

	/**
	 * Apply the limits now and then every check interval; nothing when there is no limit,
	 * or when started already.
	 */
	public void start() {
		if (!this.limits.limited() || !this.started.compareAndSet(false, true)) {
			return;
		}
		logger.info("Retention of '" + this.parkingLot.parkingLot() + "': parked messages "
				+ ((this.limits.maxAge() != null) ? "older than " + this.limits.maxAge() : "")
				+ ((this.limits.maxAge() != null && this.limits.maxCount() != null) ? " and " : "")
				+ ((this.limits.maxCount() != null) ? "beyond the latest " + this.limits.maxCount() : "")
				+ " are removed, checked every " + this.checkInterval);
		this.scheduler.scheduleWithFixedDelay(this::applyLogged, 0, this.checkInterval.toMillis(),
				TimeUnit.MILLISECONDS);
	}

	/**
	 * Apply the limits once, in the caller's thread.
	 * @return what was removed
	 */
	public RetentionResult apply() {
		RetentionResult result = this.parkingLot.removeExpired(this.limits);
		if (result.removed() > 0) {
			logger.info("Retention removed " + result.removed() + " parked message(s) from '" + result.parkingLot()
					+ "': " + result.olderThanMaxAge() + " parked longer ago than " + this.limits.maxAge() + ", "
					+ result.beyondMaxCount() + " beyond the latest " + this.limits.maxCount()
					+ " (no limit where null)");
			this.events.publishEvent(new ParkedMessagesExpiredEvent(result.parkingLot(), result.olderThanMaxAge(),
					result.beyondMaxCount(), this.limits.maxAge(), this.limits.maxCount()));
		}
		return result;
	}

	private void applyLogged() {
		try {
			apply();
		}
		catch (RuntimeException ex) {
			// Tried again at the next check: a broker that is away now may be back.
			logger.warn("Retention of '" + this.parkingLot.parkingLot() + "' failed; tried again in "
					+ this.checkInterval + ": " + ex);
		}
	}

	/**
	 * Stop applying the limits.
	 */
	@Override
	public void close() {
		this.scheduler.shutdownNow();
	}

}
