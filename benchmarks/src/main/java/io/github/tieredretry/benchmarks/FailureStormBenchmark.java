package io.github.tieredretry.benchmarks;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.tieredretry.benchmarks.app.BenchmarkListeners;
import io.github.tieredretry.benchmarks.app.Workload;
import io.github.tieredretry.benchmarks.broker.MessagePublisher.Failures;
import io.github.tieredretry.benchmarks.report.Comparison;
import io.github.tieredretry.benchmarks.report.RatioSeries;
import io.github.tieredretry.benchmarks.report.SideSeries;
import io.github.tieredretry.topology.QueueType;

/**
 * Benchmark 2: 5% of the messages fail twice before they succeed, with delays of 1 s then
 * 2 s. Measured: the throughput of the healthy 95%, with tiered retries (quorum tiers,
 * and classic tiers), with the limit side (a consumer written against the RabbitMQ Java
 * client making the same broker operations per message), with Spring AMQP's blocking
 * retry (Spring Boot's {@code spring.rabbitmq.listener.simple.retry.*}, same delays),
 * and, for tiered retries and the limit side, when nothing fails.
 */
final class FailureStormBenchmark {

	static final String TIERED_NO_FAILURES = "@RetryableListener, no failures";

	static final String TIERED_STORM = "@RetryableListener, quorum tiers, 5% fail twice";

	static final String LIMIT_NO_FAILURES = "limit side, no failures";

	static final String LIMIT_STORM = "limit side, quorum tiers, 5% fail twice";

	static final String TIERED_CLASSIC_STORM = "@RetryableListener, classic tiers, 5% fail twice";

	static final String LIMIT_CLASSIC_STORM = "limit side, classic tiers, 5% fail twice";

	static final String BLOCKING_STORM = "blocking retry, 5% fail twice";

	private FailureStormBenchmark() {
	}

	static Comparison run(RunContext run) {
		int messages = run.settings().stormMessages();
		Failures storm = new Failures(BenchmarkSettings.STORM_FAILING_EVERY, BenchmarkSettings.STORM_FAILING_ATTEMPTS);
		int healthy = messages - storm.failingCount(messages);
		MeasuredSide tiered = stormSide(run, TIERED_STORM, QueueType.QUORUM);
		MeasuredSide limit = run.limitSide(LIMIT_STORM, QueueType.QUORUM, BenchmarkListeners.STORM);
		ListenerSide blocking = run.side(BLOCKING_STORM, RunContext.BLOCKING, BenchmarkListeners.STORM);
		Map<String, Alternation.Measurement> sides = new LinkedHashMap<>();
		sides.put(TIERED_NO_FAILURES, HappyPathBenchmark.backlogOf(run, tiered, messages));
		sides.put(TIERED_STORM, tieredStorm(run, tiered, messages, storm, healthy));
		sides.put(LIMIT_NO_FAILURES, HappyPathBenchmark.backlogOf(run, limit, messages));
		sides.put(LIMIT_STORM, tieredStorm(run, limit, messages, storm, healthy));
		sides.put(TIERED_CLASSIC_STORM,
				tieredStorm(run, stormSide(run, TIERED_CLASSIC_STORM, QueueType.CLASSIC), messages, storm, healthy));
		sides.put(LIMIT_CLASSIC_STORM,
				tieredStorm(run, run.limitSide(LIMIT_CLASSIC_STORM, QueueType.CLASSIC, BenchmarkListeners.STORM),
						messages, storm, healthy));
		sides.put(BLOCKING_STORM, (label, roundId) -> blockingStorm(run, blocking, roundId, messages, storm, healthy));
		Alternation.Outcome outcome = run.alternate("failure-storm", sides);
		SideSeries tieredSeries = outcome.series(TIERED_STORM);
		SideSeries limitSeries = outcome.series(LIMIT_STORM);
		SideSeries tieredClassicSeries = outcome.series(TIERED_CLASSIC_STORM);
		RatioSeries tieredDrop = RatioSeries.of("@RetryableListener storm (quorum tiers) ÷ without failures",
				tieredSeries, outcome.series(TIERED_NO_FAILURES), 0.9);
		RatioSeries limitDrop = RatioSeries.of("limit side storm (quorum tiers) ÷ without failures", limitSeries,
				outcome.series(LIMIT_NO_FAILURES), Double.NaN);
		return new Comparison("failure-storm", "2. Failure storm: throughput of the healthy 95%", "healthy messages/s",
				messages, outcome.allSeries(),
				List.of(RatioSeries.of("@RetryableListener ÷ limit side, storm, quorum tiers", tieredSeries,
						limitSeries, 0.95), tieredDrop, limitDrop,
						// Without failures no retry machinery runs: what separates the
						// sides then is the listener container, which a plain
						// @RabbitListener has too.
						RatioSeries.of("@RetryableListener ÷ limit side, without failures",
								outcome.series(TIERED_NO_FAILURES), outcome.series(LIMIT_NO_FAILURES), Double.NaN),
						// 1 when the storm slows the starter exactly as much as it slows
						// the limit side: what the retry machinery costs beyond the
						// broker's work, the container's share taken out.
						RatioSeries.of("storm ÷ without failures: @RetryableListener's ÷ limit side's", tieredDrop,
								limitDrop, Double.NaN),
						RatioSeries.of("@RetryableListener ÷ limit side, storm, classic tiers", tieredClassicSeries,
								outcome.series(LIMIT_CLASSIC_STORM), Double.NaN),
						RatioSeries.of("@RetryableListener storm: quorum ÷ classic tiers", tieredSeries,
								tieredClassicSeries, Double.NaN),
						RatioSeries.of("@RetryableListener storm (quorum tiers) ÷ blocking-retry storm", tieredSeries,
								outcome.series(BLOCKING_STORM), 50)),
				outcome.orders());
	}

	private static ListenerSide stormSide(RunContext run, String label, QueueType type) {
		return run.side(label, RunContext.tiered(type), BenchmarkListeners.STORM);
	}

	// Tiered retries (the starter's or the limit side's): the round lasts until every
	// message, retries included, is processed, so that no retry is still under way when
	// the next round starts; the healthy throughput ends with the last healthy message.
	static Alternation.Measurement tieredStorm(RunContext run, MeasuredSide side, int messages, Failures storm,
			int healthy) {
		return (label, roundId) -> tieredStorm(run, side, roundId, messages, storm, healthy);
	}

	private static double tieredStorm(RunContext run, MeasuredSide side, String roundId, int messages, Failures storm,
			int healthy) {
		Workload.Round round = side.prepare(run.broker(), roundId, messages, healthy, 0, false);
		run.publisher().publishBacklog(side.queue(), roundId, messages, storm);
		side.start();
		try {
			long first = round.awaitFirstDelivery(RunContext.roundTimeout(messages));
			round.awaitAllProcessed(RunContext.roundTimeout(messages));
			return HappyPathBenchmark.perSecond(healthy, round.lastHealthyNanos() - first);
		}
		finally {
			side.stop();
		}
	}

	// Blocking retries stall the consumer for 3 s per failing message: measured for a
	// fixed window at most, as the healthy messages processed in it.
	private static double blockingStorm(RunContext run, ListenerSide side, String roundId, int messages, Failures storm,
			int healthy) {
		Workload.Round round = side.prepare(run.broker(), roundId, messages, healthy, 0, false);
		run.publisher().publishBacklog(side.queue(), roundId, messages, storm);
		side.start();
		try {
			long first = round.awaitFirstDelivery(RunContext.roundTimeout(messages));
			long windowEnd = first + run.settings().blockingWindow().toNanos();
			boolean all = round.awaitHealthyUntil(windowEnd);
			int processed = round.healthyCount();
			long end = all ? round.lastHealthyNanos() : windowEnd;
			return HappyPathBenchmark.perSecond(processed, end - first);
		}
		finally {
			// Stopping waits for the message in hand (possibly mid-retry); the rest goes
			// back and is purged.
			side.stop();
		}
	}

}
