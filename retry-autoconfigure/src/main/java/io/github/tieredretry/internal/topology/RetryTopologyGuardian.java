package io.github.tieredretry.internal.topology;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;

/**
 * Checks every so often that the retry topology still exists on the broker, and declares
 * it again (which also restores bindings, which cannot be checked). Forwards heal a
 * missing tier, parking lot or delay exchange themselves, but nothing forwards to
 * {@code retry.return}: if it were deleted, the broker would silently drop every retry
 * leaving a tier until the next reconnection. The check is a few declarations that create
 * nothing.
 */
public final class RetryTopologyGuardian implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(RetryTopologyGuardian.class);

	private final RetryTopologyDeclarer declarer;

	private final Duration interval;

	private final ScheduledExecutorService scheduler;

	private final BooleanSupplier brokerBlocksConnection;

	private @Nullable ScheduledFuture<?> checks;

	/**
	 * Create a guardian.
	 * @param declarer inspects the broker and declares the topology again
	 * @param interval time between checks; zero or negative disables the checks
	 * @param scheduler the thread the checks run on
	 * @param brokerBlocksConnection whether the broker blocks the connection now (a
	 * resource alarm): checks would only wait for it to clear, and are skipped
	 */
	public RetryTopologyGuardian(RetryTopologyDeclarer declarer, Duration interval, ScheduledExecutorService scheduler,
			BooleanSupplier brokerBlocksConnection) {
		this.declarer = declarer;
		this.interval = interval;
		this.scheduler = scheduler;
		this.brokerBlocksConnection = brokerBlocksConnection;
	}

	/**
	 * Check the topology now and declare it again. Declaring is idempotent; it also
	 * restores a binding that was lost with a queue deleted and recreated by hand
	 * (without the binding from {@code retry.parked}, unroutable retries would be
	 * dropped).
	 * @return the exchanges and queues that were missing (empty when all exist or the
	 * broker cannot be reached)
	 */
	public List<String> checkNow() {
		if (this.brokerBlocksConnection.getAsBoolean()) {
			logger.debug("Retry topology check skipped: the broker blocks the connection (resource alarm)");
			return List.of();
		}
		List<String> missing;
		try {
			missing = this.declarer.missing();
		}
		catch (RuntimeException ex) {
			logger.debug("Retry topology check skipped: " + ex.getMessage());
			return List.of();
		}
		if (!missing.isEmpty()) {
			logger.warn("Retry topology objects missing on the broker: " + missing + "; declaring them again");
		}
		try {
			this.declarer.declare();
		}
		catch (RuntimeException ex) {
			logger.warn("Could not declare the retry topology again: " + ex.getMessage());
		}
		return missing;
	}

	@Override
	public synchronized void start() {
		if (this.interval.isNegative() || this.interval.isZero() || this.checks != null) {
			return;
		}
		long millis = this.interval.toMillis();
		this.checks = this.scheduler.scheduleWithFixedDelay(this::checkNow, millis, millis, TimeUnit.MILLISECONDS);
	}

	@Override
	public synchronized void stop() {
		ScheduledFuture<?> scheduled = this.checks;
		if (scheduled != null) {
			scheduled.cancel(false);
			this.checks = null;
		}
	}

	@Override
	public boolean isRunning() {
		return this.checks != null;
	}

	@Override
	public int getPhase() {
		return RetryTopologyInitializer.PHASE;
	}

}
