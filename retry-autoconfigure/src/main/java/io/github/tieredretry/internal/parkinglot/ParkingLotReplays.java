package io.github.tieredretry.internal.parkinglot;

import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.github.tieredretry.observation.RetryObservations;
import io.github.tieredretry.parkinglot.ParkedMessageFilter;
import io.github.tieredretry.parkinglot.ParkingLotRequestException;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.parkinglot.ReplayInProgressException;
import io.github.tieredretry.parkinglot.ReplayPreview;
import io.github.tieredretry.parkinglot.ReplayResult;
import io.github.tieredretry.parkinglot.ReplaySettings;
import io.github.tieredretry.parkinglot.ReplayStatus;
import io.github.tieredretry.parkinglot.StayReason;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Moves parked messages back to their origin queue, one replay at a time, in the caller's
 * thread or in the background, and says what a replay would move: the replays of
 * {@link ParkingLotService}. Each replay is a {@link ReplayRun}.
 */
final class ParkingLotReplays implements AutoCloseable {

	// The lines operators know, under the name of the service they call.
	private static final Log logger = LogFactory.getLog(ParkingLotService.class);

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

	ParkingLotReplays(ParkingLotScanner scanner, Replayer replayer, ReplaySettings replaySettings,
			RetryObservations observations, Clock clock) {
		this.scanner = scanner;
		this.replayer = replayer;
		this.replaySettings = replaySettings;
		this.observations = observations;
		this.clock = clock;
	}

	ReplaySettings replaySettings() {
		return this.replaySettings;
	}

	ReplayResult replayMatching(ParkedMessageFilter filter, @Nullable Integer limit) {
		ReplayRun run = newReplay(filter, limit, new ReplayControl());
		try {
			return logged(run, run.run());
		}
		finally {
			this.replayPermit.release();
		}
	}

	ReplayStatus startReplay(ParkedMessageFilter filter, @Nullable Integer limit, Consumer<ReplayStatus> whenEnded) {
		ReplayControl control = new ReplayControl();
		ReplayRun run = newReplay(filter, limit, control);
		BackgroundReplay replay = new BackgroundReplay(UUID.randomUUID().toString().substring(0, 8), filter, limit, run,
				control, whenEnded);
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

	@Nullable ReplayStatus replayStatus() {
		BackgroundReplay replay = this.lastReplay;
		return (replay != null) ? replay.status() : null;
	}

	@Nullable ReplayStatus stopReplay() {
		BackgroundReplay replay = this.lastReplay;
		if (replay == null) {
			return null;
		}
		replay.control.stop();
		return replay.status();
	}

	ReplayPreview previewReplay(ParkedMessageFilter filter, @Nullable Integer limit, int scanLimit) {
		checkReplayLimit(limit);
		ParkedMessageLooker.checkRange("scanLimit", scanLimit, ParkingLotService.MAX_SCAN_LIMIT);
		int[] wouldMove = { 0 };
		Map<String, Integer> stayedByReason = new TreeMap<>();
		ParkingLotScanner.Pass pass = this.scanner.pass(scanLimit, new ParkedMessageLooker(filter, (message) -> {
			if (message.originQueue() != null) {
				wouldMove[0]++;
			}
			else {
				stayedByReason.merge(StayReason.NO_ORIGIN_QUEUE.value(), 1, Integer::sum);
			}
		}) {

			@Override
			public boolean wantsMore() {
				return limit == null || matched() < limit;
			}

		});
		int wouldStay = stayedByReason.values().stream().mapToInt(Integer::intValue).sum();
		return new ReplayPreview(wouldMove[0], wouldStay, stayedByReason, pass.count(),
				ParkedMessageLooker.isPartial(pass, scanLimit));
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

	private String parkingLot() {
		return this.scanner.parkingLot();
	}

	private static void checkReplayLimit(@Nullable Integer limit) {
		if (limit != null && limit < 1) {
			throw new ParkingLotRequestException("limit must be at least 1 but was " + limit);
		}
	}

	private static CustomizableThreadFactory daemonThreads(String prefix) {
		CustomizableThreadFactory threads = new CustomizableThreadFactory(prefix);
		threads.setDaemon(true);
		return threads;
	}

	/** A replay in the background. */
	private final class BackgroundReplay {

		private final String id;

		private final ParkedMessageFilter filter;

		private final @Nullable Integer limit;

		private final ReplayRun run;

		private final ReplayControl control;

		private final Consumer<ReplayStatus> whenEnded;

		private volatile @Nullable Instant endedAt;

		private volatile @Nullable String failure;

		BackgroundReplay(String id, ParkedMessageFilter filter, @Nullable Integer limit, ReplayRun run,
				ReplayControl control, Consumer<ReplayStatus> whenEnded) {
			this.id = id;
			this.filter = filter;
			this.limit = limit;
			this.run = run;
			this.control = control;
			this.whenEnded = whenEnded;
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
				this.endedAt = ParkingLotReplays.this.clock.instant();
				ParkingLotReplays.this.replayPermit.release();
				ended();
			}
		}

		private void ended() {
			try {
				this.whenEnded.accept(status());
			}
			catch (RuntimeException ex) {
				logger.warn("The end of replay " + this.id + " from '" + parkingLot() + "' was not reported", ex);
			}
		}

		ReplayStatus status() {
			ReplayResult progress = this.run.result();
			String failed = this.failure;
			String stoppedBecause = this.run.stoppedBecause();
			String state = (this.endedAt == null) ? ReplayStatus.RUNNING : (failed != null) ? ReplayStatus.FAILED
					: (stoppedBecause != null) ? ReplayStatus.STOPPED : ReplayStatus.FINISHED;
			return new ReplayStatus(this.id, state, this.filter, this.limit,
					ParkingLotReplays.this.replaySettings.rate(), this.run.started(), this.endedAt, progress.moved(),
					progress.stayed(), progress.stayedByReason(), progress.stayedMessages(), progress.scanned(),
					(failed != null) ? failed : stoppedBecause);
		}

	}

}
