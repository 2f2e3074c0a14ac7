package io.github.tieredretry.benchmarks;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import io.github.tieredretry.benchmarks.app.BenchmarkListeners;
import io.github.tieredretry.benchmarks.app.Workload;
import io.github.tieredretry.benchmarks.report.OutageResult;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.topology.QueueType;

/**
 * Benchmark 6: what a downstream outage costs, with and without the listener's circuit
 * breaker. A steady stream of messages reaches a {@code @RetryableListener} whose
 * downstream goes down for a while and comes back; the same policy (three retries after 1
 * s, 5 s and 10 s by default) on both sides, one with the policy's breaker. Measured per
 * side and repeat: the messages parked, the time to drain (from the end of the outage
 * until every message published so far has been processed or parked and the queue and the
 * tiers are empty), and the messages processed. Absolute figures, no ratio: the side with
 * a breaker parks nothing.
 */
final class OutageBenchmark {

	static final String WITH_BREAKER = "@RetryableListener with breaker";

	static final String WITHOUT_BREAKER = "@RetryableListener without breaker";

	/** How often the harness looks whether the outage is drained. */
	private static final Duration DRAIN_POLL = Duration.ofMillis(20);

	private OutageBenchmark() {
	}

	static OutageResult run(RunContext run) {
		BenchmarkSettings settings = run.settings();
		QueueType type = BenchmarkSettings.DEFAULT_TIER_TYPE;
		List<Duration> delays = settings.policyDelays(BenchmarkListeners.OUTAGE, type);
		List<String> tiers = delays.stream().map(RetryTopology::tierQueueName).toList();
		String parkingLot = run.parkingLot(RunContext.OUTAGE);
		Map<String, Alternation.RoundMeasurement<OutageResult.Round>> sides = new LinkedHashMap<>();
		for (String label : List.of(WITH_BREAKER, WITHOUT_BREAKER)) {
			ListenerSide side = run.side(label, RunContext.OUTAGE,
					WITH_BREAKER.equals(label) ? BenchmarkListeners.OUTAGE_BREAKER : BenchmarkListeners.OUTAGE);
			sides.put(label, (ignored, roundId) -> outage(run, side, roundId, tiers, parkingLot));
		}
		run.log("[outage] " + TierLadder.nameOf(settings.outage()) + " outage in a stream of " + settings.outageRate()
				+ " msg/s; policy retries after " + RunContext.names(delays) + "; about "
				+ Math.round(2.0 * settings.outageRepeats() * roundSeconds(settings)) + " s");
		Alternation.Rounds<OutageResult.Round> rounds = run.alternate("outage", sides, settings.outageRepeats(), 0,
				OutageBenchmark::describe);
		String breaker = Math.round(BenchmarkSettings.OUTAGE_BREAKER_THRESHOLD) + "% failures of the latest "
				+ BenchmarkSettings.OUTAGE_BREAKER_WINDOW + " messages open it; it tries "
				+ BenchmarkSettings.OUTAGE_BREAKER_PROBES + " messages again after "
				+ TierLadder.nameOf(settings.outageBreakerWait());
		return new OutageResult(TierLadder.nameOf(settings.outage()), settings.outageRate(),
				delays.stream().map(TierLadder::nameOf).toList(), breaker,
				rounds.values()
					.entrySet()
					.stream()
					.map((entry) -> new OutageResult.Side(entry.getKey(), entry.getValue()))
					.toList(),
				rounds.orders());
	}

	// One round: the stream starts, the downstream goes down after the lead-in and comes
	// back after the outage; the round ends once the outage is drained and every message
	// published until then is settled.
	private static OutageResult.Round outage(RunContext run, ListenerSide side, String roundId, List<String> tiers,
			String parkingLot) {
		BenchmarkSettings settings = run.settings();
		run.broker().purge(parkingLot);
		Workload.Round round = side.prepare(run.broker(), roundId, 0, 0, 0, false);
		AtomicBoolean publishing = new AtomicBoolean(true);
		AtomicInteger published = new AtomicInteger();
		AtomicReference<RuntimeException> publishFailure = new AtomicReference<>();
		Thread publisher = new Thread(() -> {
			try {
				run.publisher().publishStream(side.queue(), roundId, settings.outageRate(), publishing::get, published);
			}
			catch (RuntimeException ex) {
				publishFailure.set(ex);
			}
		}, "outage-publisher");
		side.start();
		publisher.start();
		try {
			streamFor(settings.outageLeadIn(), publisher, publishFailure);
			round.downstreamDown(true);
			streamFor(settings.outage(), publisher, publishFailure);
			round.downstreamDown(false);
			long outageEnd = System.nanoTime();
			long drained = awaitDrained(run, side, round, published, publishFailure, tiers, outageEnd);
			publishing.set(false);
			join(publisher);
			failIfPublishingFailed(publishFailure);
			// The stream went on while the outage drained: wait for what it published
			// meanwhile.
			awaitSettled(run, round, published.get(), publishFailure,
					System.nanoTime() + RunContext.roundTimeout(settings.outageRate()).toNanos());
			if (settled(round) > published.get()) {
				run.log("[outage] " + roundId + ": " + (settled(round) - published.get()) + " more messages processed "
						+ "or parked than published: a message was delivered again after it was settled");
			}
			long inParkingLot = run.broker().messageCount(parkingLot);
			if (inParkingLot != round.parkedCount()) {
				throw new IllegalStateException("Round " + roundId + ": " + round.parkedCount() + " messages parked "
						+ "by the starter's events, but " + inParkingLot + " in the parking lot " + parkingLot);
			}
			return new OutageResult.Round(published.get(), round.healthyCount(), round.parkedCount(),
					(drained - outageEnd) / 1e9);
		}
		finally {
			round.downstreamDown(false);
			publishing.set(false);
			join(publisher);
			side.stop();
		}
	}

	// Wait until every message published so far is processed or parked, and the
	// listener's queue and the policy's tiers are empty.
	// Returns when it was so
	private static long awaitDrained(RunContext run, ListenerSide side, Workload.Round round, AtomicInteger published,
			AtomicReference<RuntimeException> publishFailure, List<String> tiers, long outageEnd) {
		BenchmarkSettings settings = run.settings();
		Duration timeout = RunContext.roundTimeout(
				(int) Math.min(Integer.MAX_VALUE, settings.outageRate() * (settings.outage().toSeconds() + 1)));
		long deadline = outageEnd + timeout.toNanos();
		while (true) {
			int sent = published.get();
			long now = System.nanoTime();
			if (settled(round) >= sent && empty(run, side.queue())
					&& tiers.stream().allMatch((tier) -> empty(run, tier))) {
				return now;
			}
			failIfPublishingFailed(publishFailure);
			if (now > deadline) {
				throw new IllegalStateException("The outage was not drained " + timeout + " after its end ("
						+ settled(round) + " of " + sent + " messages processed or parked; queue "
						+ run.broker().messageCount(side.queue()) + ")");
			}
			LockSupport.parkNanos(DRAIN_POLL.toNanos());
		}
	}

	private static void awaitSettled(RunContext run, Workload.Round round, int messages,
			AtomicReference<RuntimeException> publishFailure, long deadline) {
		while (settled(round) < messages) {
			failIfPublishingFailed(publishFailure);
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("Only " + settled(round) + " of " + messages
						+ " messages were processed or parked after the outage was drained");
			}
			LockSupport.parkNanos(DRAIN_POLL.toNanos());
		}
	}

	private static int settled(Workload.Round round) {
		return round.healthyCount() + round.parkedCount();
	}

	private static boolean empty(RunContext run, String queue) {
		return run.broker().messageCount(queue) == 0;
	}

	private static void failIfPublishingFailed(AtomicReference<RuntimeException> publishFailure) {
		RuntimeException failure = publishFailure.get();
		if (failure != null) {
			throw failure;
		}
	}

	// Roughly how long a round takes: the lead-in, the outage, and a drain bounded by the
	// longest delay or the breaker's wait.
	private static double roundSeconds(BenchmarkSettings settings) {
		Duration longest = settings.outageDelays().stream().max(Duration::compareTo).orElse(Duration.ZERO);
		Duration drain = (longest.compareTo(settings.outageBreakerWait()) > 0) ? longest : settings.outageBreakerWait();
		return (settings.outageLeadIn().toMillis() + settings.outage().toMillis() + drain.toMillis()) / 1000.0;
	}

	private static String describe(OutageResult.Round round) {
		return String.format(Locale.ROOT, "%,d parked, drained in %.2f s, %,d processed of %,d published",
				round.parked(), round.drainSeconds(), round.processed(), round.published());
	}

	// Let the stream run for a while; a publisher that fails ends the wait, and the
	// round, at once.
	private static void streamFor(Duration duration, Thread publisher,
			AtomicReference<RuntimeException> publishFailure) {
		try {
			publisher.join(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
		failIfPublishingFailed(publishFailure);
	}

	private static void join(Thread thread) {
		try {
			thread.join();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

}
