package io.github.tieredretry.benchmarks;

import java.util.List;
import java.util.Map;

import io.github.tieredretry.benchmarks.app.BenchmarkListeners;
import io.github.tieredretry.benchmarks.app.Workload;
import io.github.tieredretry.benchmarks.broker.MessagePublisher.Failures;
import io.github.tieredretry.benchmarks.report.Comparison;
import io.github.tieredretry.benchmarks.report.RatioSeries;
import io.github.tieredretry.benchmarks.report.SideSeries;

/**
 * Benchmark 2: 5% of the messages fail twice before they succeed, with delays of 1 s then 2 s. Measured:
 * the throughput of the healthy 95%, with tiered retries, with Spring AMQP's blocking retry (Spring Boot's
 * {@code spring.rabbitmq.listener.simple.retry.*}, same delays), and with tiered retries when nothing fails.
 */
final class FailureStormBenchmark {

	static final String TIERED_NO_FAILURES = "@RetryableListener, no failures";

	static final String TIERED_STORM = "@RetryableListener, 5% fail twice";

	static final String BLOCKING_STORM = "blocking retry, 5% fail twice";

	private FailureStormBenchmark() {
	}

	static Comparison run(RunContext run) {
		int messages = run.settings().stormMessages();
		Failures storm = new Failures(BenchmarkSettings.STORM_FAILING_EVERY, BenchmarkSettings.STORM_FAILING_ATTEMPTS);
		int healthy = messages - storm.failingCount(messages);
		ListenerSide tiered = run.side(TIERED_STORM, RunContext.TIERED, BenchmarkListeners.STORM);
		ListenerSide blocking = run.side(BLOCKING_STORM, RunContext.BLOCKING, BenchmarkListeners.STORM);
		Map<String, Alternation.Measurement> measurements = Map.of(
				TIERED_NO_FAILURES, (label, roundId) -> HappyPathBenchmark.consumeBacklog(run, tiered, roundId, messages),
				TIERED_STORM, (label, roundId) -> tieredStorm(run, tiered, roundId, messages, storm, healthy),
				BLOCKING_STORM, (label, roundId) -> blockingStorm(run, blocking, roundId, messages, storm, healthy));
		List<String> order = List.of(TIERED_NO_FAILURES, TIERED_STORM, BLOCKING_STORM);
		Alternation.Outcome outcome = Alternation.run("failure-storm", run.runId() + "-fs", order,
				run.settings().repeats(), run.settings().warmups(),
				(label, roundId) -> measurements.get(label).measure(label, roundId), run::log);
		SideSeries noFailures = new SideSeries(TIERED_NO_FAILURES, outcome.values().get(TIERED_NO_FAILURES));
		SideSeries tieredSeries = new SideSeries(TIERED_STORM, outcome.values().get(TIERED_STORM));
		SideSeries blockingSeries = new SideSeries(BLOCKING_STORM, outcome.values().get(BLOCKING_STORM));
		return new Comparison("failure-storm", "2. Failure storm: throughput of the healthy 95%", "healthy messages/s",
				messages, List.of(noFailures, tieredSeries, blockingSeries),
				List.of(RatioSeries.of("tiered storm ÷ tiered without failures", tieredSeries, noFailures, 0.9),
						RatioSeries.of("tiered storm ÷ blocking-retry storm", tieredSeries, blockingSeries, 50)),
				outcome.orders());
	}

	/**
	 * Tiered retries: the round lasts until every message, retries included, is processed, so that no
	 * retry is still under way when the next round starts; the healthy throughput ends with the last
	 * healthy message.
	 */
	private static double tieredStorm(RunContext run, ListenerSide side, String roundId, int messages,
			Failures storm, int healthy) {
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

	/**
	 * Blocking retries stall the consumer for 3 s per failing message: measured for a fixed window at most,
	 * as the healthy messages processed in it.
	 */
	private static double blockingStorm(RunContext run, ListenerSide side, String roundId, int messages,
			Failures storm, int healthy) {
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
			// Stopping waits for the message in hand (possibly mid-retry); the rest goes back and is purged.
			side.stop();
		}
	}

}
