package io.github.tieredretry.internal.parkinglot;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.GetResponse;
import io.github.tieredretry.internal.forwarding.ForwardFailedException;
import io.github.tieredretry.internal.parkinglot.ParkingLotScanner.Decision;
import io.github.tieredretry.observation.RetryObservations;
import io.github.tieredretry.observation.RetryReplayContext;
import io.github.tieredretry.parkinglot.ParkedMessage;
import io.github.tieredretry.parkinglot.ParkedMessageFilter;
import io.github.tieredretry.parkinglot.ReplayResult;
import io.github.tieredretry.parkinglot.ReplaySettings;
import io.github.tieredretry.parkinglot.StayReason;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * One replay: moves matching parked messages to their origin queue, oldest first, at a
 * limited rate, in passes of at most {@code batchSize} moved messages.
 * <p>
 * A pass holds the messages it skips (they do not match, or cannot be moved)
 * unacknowledged until it ends, and acks each moved message after its confirmed publish;
 * so no pass holds messages for longer than it takes to move one batch at the rate. The
 * next pass starts from the head of the parking lot again: the messages earlier passes
 * kept are, in order, the first ones it reads, and are skipped without a second look.
 * Passes together look at no more messages than the parking lot held when the replay
 * started.
 */
final class ReplayRun {

	/** The most stayed messages listed in a result (all are counted). */
	static final int MAX_LISTED_STAYED = 100;

	private final Passes passes;

	private final Replayer replayer;

	private final ParkedMessageFilter filter;

	private final @Nullable Integer limit;

	private final int batchSize;

	private final ReplayPacer pacer;

	private final ReplayControl control;

	private final RetryObservations observations;

	private final Clock clock;

	private final Instant started;

	private int moved;

	private int scanned;

	private int attempted;

	private final List<ReplayResult.StayedMessage> stayed = new ArrayList<>();

	private final Map<StayReason, Integer> stayedByReason = new EnumMap<>(StayReason.class);

	private @Nullable String stoppedBecause;

	ReplayRun(Passes passes, Replayer replayer, ParkedMessageFilter filter, @Nullable Integer limit,
			ReplaySettings settings, ReplayControl control, RetryObservations observations, Clock clock) {
		this.passes = passes;
		this.replayer = replayer;
		this.filter = filter;
		this.limit = limit;
		this.batchSize = settings.batchSize();
		this.control = control;
		this.pacer = new ReplayPacer(settings.rate(), System::nanoTime, control::awaitStop);
		this.observations = observations;
		this.clock = clock;
		this.started = clock.instant();
	}

	/**
	 * Replay, in the calling thread.
	 * @return what moved and what stayed
	 */
	ReplayResult run() {
		long initialDepth = -1;
		int kept = 0;
		while (true) {
			PassVisitor visitor = new PassVisitor(kept);
			long bound = (initialDepth < 0) ? Long.MAX_VALUE : initialDepth - movedSoFar();
			ParkingLotScanner.Pass pass = this.passes.pass(bound, visitor);
			if (initialDepth < 0) {
				initialDepth = pass.depth();
			}
			kept = visitor.kept;
			if (visitor.last || pass.exhausted() || visitor.passMoved < this.batchSize) {
				return result();
			}
		}
	}

	/**
	 * What the replay did so far.
	 * @return the progress
	 */
	synchronized ReplayResult result() {
		Map<String, Integer> byReason = new TreeMap<>();
		this.stayedByReason.forEach((reason, count) -> byReason.put(reason.value(), count));
		return new ReplayResult(this.moved, this.stayedByReason.values().stream().mapToInt(Integer::intValue).sum(),
				byReason, this.stayed, this.scanned);
	}

	/**
	 * Why the replay stopped before it had looked at every matching message.
	 * @return the reason, or {@code null} if it did not stop early
	 */
	synchronized @Nullable String stoppedBecause() {
		return this.stoppedBecause;
	}

	ParkedMessageFilter filter() {
		return this.filter;
	}

	Instant started() {
		return this.started;
	}

	private synchronized int movedSoFar() {
		return this.moved;
	}

	private synchronized void count(boolean movedOne) {
		this.scanned++;
		if (movedOne) {
			this.moved++;
		}
	}

	private synchronized void stay(ParkedMessage message, StayReason reason, @Nullable String detail) {
		this.stayedByReason.merge(reason, 1, Integer::sum);
		if (this.stayed.size() < MAX_LISTED_STAYED) {
			this.stayed.add(new ReplayResult.StayedMessage(message.messageId(), message.originQueue(), reason, detail));
		}
	}

	private synchronized void stop(String because) {
		if (this.stoppedBecause == null) {
			this.stoppedBecause = because;
		}
	}

	/** Reads the parking lot: {@link ParkingLotScanner#pass}. */
	@FunctionalInterface
	interface Passes {

		ParkingLotScanner.Pass pass(long bound, ParkingLotScanner.Visitor visitor);

	}

	/** Decides about the messages of one pass. */
	private final class PassVisitor implements ParkingLotScanner.Visitor {

		/**
		 * Messages at the head that earlier passes kept, in order: skipped without a
		 * second look.
		 */
		private final int skip;

		private int index;

		/** Messages kept so far, by this and earlier passes. */
		private int kept;

		private int passMoved;

		/**
		 * Whether this is the last pass (the broker blocks publishing, or the replay
		 * ended).
		 */
		private boolean last;

		private boolean blocked;

		PassVisitor(int skip) {
			this.skip = skip;
			this.kept = skip;
		}

		@Override
		public boolean wantsMore() {
			boolean underLimit = ReplayRun.this.limit == null || ReplayRun.this.attempted < ReplayRun.this.limit;
			if (!underLimit) {
				this.last = true;
			}
			return underLimit && (this.blocked || this.passMoved < ReplayRun.this.batchSize);
		}

		@Override
		public Decision visit(GetResponse response) {
			if (this.index++ < this.skip) {
				return Decision.KEEP;
			}
			Instant replayedAt = ParkedMessages.replayedAt(response.getProps());
			if (replayedAt != null && !replayedAt.isBefore(ReplayRun.this.started)) {
				// Replayed by this very replay and parked again: everything from here on
				// is newer.
				this.last = true;
				return Decision.KEEP_AND_STOP;
			}
			ParkedMessage message = ParkedMessages.describe(response);
			if (!ReplayRun.this.filter.matches(message)) {
				return keep();
			}
			ReplayRun.this.attempted++;
			String origin = message.originQueue();
			if (origin == null) {
				return stay(message, StayReason.NO_ORIGIN_QUEUE, null);
			}
			if (this.blocked) {
				return stay(message, StayReason.BROKER_BLOCKED, null);
			}
			if (ReplayRun.this.control.isStopped() || !ReplayRun.this.pacer.awaitTurn()) {
				ReplayRun.this.stop("stopped by an operator");
				ReplayRun.this.attempted--;
				this.last = true;
				return Decision.KEEP_AND_STOP;
			}
			try {
				publish(origin, message, response);
			}
			catch (ForwardFailedException ex) {
				return failed(message, ex);
			}
			this.passMoved++;
			count(true);
			return Decision.REMOVE;
		}

		// Publish a parked message to its origin queue, observed when anything observes.
		private void publish(String origin, ParkedMessage message, GetResponse response) {
			AMQP.BasicProperties properties = ReplayHeaders.replayProperties(response.getProps(),
					ReplayRun.this.clock.instant());
			if (!ReplayRun.this.observations.isEnabled()) {
				ReplayRun.this.replayer.publish(origin, properties, response.getBody());
				return;
			}
			RetryReplayContext context = new RetryReplayContext(properties, origin, message.exception(),
					message.replays() + 1);
			Observation observation = ReplayRun.this.observations.startReplay(context);
			try {
				ReplayRun.this.replayer.publish(origin, context.publishedProperties(), response.getBody());
			}
			catch (RuntimeException ex) {
				StayReason reason = (ex instanceof ForwardFailedException failed) ? stayReason(failed)
						: StayReason.PUBLISH_FAILED;
				context.stayed(reason.value());
				RetryObservations.stop(observation, ex);
				throw ex;
			}
			RetryObservations.stop(observation, null);
		}

		private Decision failed(ParkedMessage message, ForwardFailedException ex) {
			StayReason reason = stayReason(ex);
			if (reason == StayReason.ORIGIN_QUEUE_MISSING) {
				return stay(message, reason, ex.getMessage());
			}
			this.last = true;
			if (reason == StayReason.BROKER_BLOCKED) {
				// Go on through this pass without publishing, to report every matching
				// message as stayed.
				this.blocked = true;
				ReplayRun.this.stop(ex.getMessage());
				return stay(message, StayReason.BROKER_BLOCKED, ex.getMessage());
			}
			ReplayRun.this.stop("publish failed: " + ex.getMessage());
			ReplayRun.this.stay(message, reason, ex.getMessage());
			count(false);
			return Decision.KEEP_AND_STOP;
		}

		private static StayReason stayReason(ForwardFailedException ex) {
			return switch (ex.getKind()) {
				case RETURNED -> StayReason.ORIGIN_QUEUE_MISSING;
				case BLOCKED -> StayReason.BROKER_BLOCKED;
				default -> StayReason.PUBLISH_FAILED;
			};
		}

		private Decision stay(ParkedMessage message, StayReason reason, @Nullable String detail) {
			ReplayRun.this.stay(message, reason, detail);
			return keep();
		}

		private Decision keep() {
			count(false);
			this.kept++;
			return Decision.KEEP;
		}

	}

}
