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
 * Benchmark 1: what {@code @RetryableListener} costs when nothing fails. The same backlog is consumed by a
 * plain {@code @RabbitListener} and by the same listener with tiered retries.
 */
final class HappyPathBenchmark {

	static final String PLAIN = "plain @RabbitListener";

	static final String RETRYABLE = "@RetryableListener";

	private HappyPathBenchmark() {
	}

	static Comparison run(RunContext run) {
		int messages = run.settings().happyMessages();
		Map<String, ListenerSide> sides = Map.of(PLAIN, run.side(PLAIN, RunContext.PLAIN, BenchmarkListeners.HAPPY),
				RETRYABLE, run.side(RETRYABLE, RunContext.TIERED, BenchmarkListeners.HAPPY));
		Alternation.Outcome outcome = Alternation.run("happy-path", run.runId() + "-hp", List.of(PLAIN, RETRYABLE),
				run.settings().repeats(), run.settings().warmups(),
				(label, roundId) -> consumeBacklog(run, sides.get(label), roundId, messages), run::log);
		SideSeries plain = new SideSeries(PLAIN, outcome.values().get(PLAIN));
		SideSeries retryable = new SideSeries(RETRYABLE, outcome.values().get(RETRYABLE));
		return new Comparison("happy-path", "1. Happy path: throughput without failures", "messages/s", messages,
				List.of(plain, retryable), List.of(RatioSeries.of(RETRYABLE + " ÷ " + PLAIN, retryable, plain, 0.97)),
				outcome.orders());
	}

	/**
	 * Publish a backlog of healthy messages, then let the side consume it.
	 * @return messages per second, from the first delivery to the last message processed
	 */
	static double consumeBacklog(RunContext run, ListenerSide side, String roundId, int messages) {
		Workload.Round round = side.prepare(run.broker(), roundId, messages, messages, 0, false);
		run.publisher().publishBacklog(side.queue(), roundId, messages, Failures.NONE);
		side.start();
		try {
			long first = round.awaitFirstDelivery(RunContext.roundTimeout(messages));
			round.awaitAllProcessed(RunContext.roundTimeout(messages));
			return perSecond(messages, round.lastHealthyNanos() - first);
		}
		finally {
			side.stop();
		}
	}

	static double perSecond(int count, long nanos) {
		return count / (Math.max(nanos, 1) / 1e9);
	}

}
