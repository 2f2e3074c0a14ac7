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
 * Benchmark 1: what {@code @RetryableListener} costs when nothing fails. The same backlog
 * is consumed by a plain {@code @RabbitListener} and by the same listener with tiered
 * retries, with quorum tiers (the default) and with classic tiers; and, with quorum
 * tiers, with Spring AMQP's listener and template observations on, without a tracer and
 * with Spring Boot's OpenTelemetry tracer.
 */
final class HappyPathBenchmark {

	static final String PLAIN = "plain @RabbitListener";

	static final String RETRYABLE = "@RetryableListener, quorum tiers";

	static final String RETRYABLE_CLASSIC = "@RetryableListener, classic tiers";

	static final String OBSERVED = "@RetryableListener, observation on, no tracer";

	static final String TRACED = "@RetryableListener, observation on, OpenTelemetry tracer";

	private HappyPathBenchmark() {
	}

	static Comparison run(RunContext run) {
		int messages = run.settings().happyMessages();
		Map<String, Alternation.Measurement> sides = new LinkedHashMap<>();
		sides.put(PLAIN, backlogOf(run, run.side(PLAIN, RunContext.PLAIN, BenchmarkListeners.HAPPY), messages));
		sides.put(RETRYABLE, backlogOf(run, retryable(run, RETRYABLE, QueueType.QUORUM), messages));
		sides.put(RETRYABLE_CLASSIC, backlogOf(run, retryable(run, RETRYABLE_CLASSIC, QueueType.CLASSIC), messages));
		sides.put(OBSERVED,
				backlogOf(run, run.side(OBSERVED, RunContext.OBSERVED, BenchmarkListeners.HAPPY), messages));
		sides.put(TRACED, backlogOf(run, run.side(TRACED, RunContext.TRACED, BenchmarkListeners.HAPPY), messages));
		Alternation.Outcome outcome = run.alternate("happy-path", sides);
		SideSeries plain = outcome.series(PLAIN);
		SideSeries quorum = outcome.series(RETRYABLE);
		return new Comparison("happy-path", "1. Happy path: throughput without failures", "messages/s", messages,
				outcome.allSeries(),
				List.of(RatioSeries.of("@RetryableListener (quorum tiers) ÷ " + PLAIN, quorum, plain, 0.97),
						RatioSeries.of("@RetryableListener: quorum ÷ classic tiers", quorum,
								outcome.series(RETRYABLE_CLASSIC), Double.NaN),
						RatioSeries.of("@RetryableListener: observation on, no tracer ÷ off", outcome.series(OBSERVED),
								quorum, 0.97),
						RatioSeries.of("@RetryableListener: observation on, OpenTelemetry tracer ÷ off",
								outcome.series(TRACED), quorum, Double.NaN)),
				outcome.orders());
	}

	private static ListenerSide retryable(RunContext run, String label, QueueType type) {
		return run.side(label, RunContext.tiered(type), BenchmarkListeners.HAPPY);
	}

	static Alternation.Measurement backlogOf(RunContext run, MeasuredSide side, int messages) {
		return (label, roundId) -> consumeBacklog(run, side, roundId, messages);
	}

	/**
	 * Publish a backlog of healthy messages, then let the side consume it.
	 * @param run the benchmark run
	 * @param side the side that consumes
	 * @param roundId the round, which names its queue
	 * @param messages how many messages the backlog has
	 * @return messages per second, from the first delivery to the last message processed
	 */
	static double consumeBacklog(RunContext run, MeasuredSide side, String roundId, int messages) {
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
