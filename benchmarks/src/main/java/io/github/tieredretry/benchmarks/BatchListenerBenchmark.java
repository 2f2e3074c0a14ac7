package io.github.tieredretry.benchmarks;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.tieredretry.benchmarks.app.BenchmarkListeners;
import io.github.tieredretry.benchmarks.broker.MessagePublisher.Failures;
import io.github.tieredretry.benchmarks.report.Comparison;
import io.github.tieredretry.benchmarks.report.RatioSeries;
import io.github.tieredretry.benchmarks.report.SideSeries;
import io.github.tieredretry.topology.QueueType;

/**
 * Benchmark 7: a batch listener (consumer-side batches of 50): what the batch
 * {@code @RetryableListener} costs against the same plain batch {@code @RabbitListener}
 * when nothing fails, and the throughput of its healthy 95% while 5% of the messages fail
 * twice (each failed message named with {@code BatchListenerFailedException}, retried on
 * its own through the tiers while the rest of its batch is acked).
 */
final class BatchListenerBenchmark {

	static final String PLAIN = "plain batch @RabbitListener";

	static final String RETRYABLE = "batch @RetryableListener, quorum tiers";

	static final String RETRYABLE_STORM = "batch @RetryableListener, quorum tiers, 5% fail twice";

	private BatchListenerBenchmark() {
	}

	static Comparison run(RunContext run) {
		int messages = run.settings().happyMessages();
		int stormMessages = run.settings().stormMessages();
		Failures storm = new Failures(BenchmarkSettings.STORM_FAILING_EVERY, BenchmarkSettings.STORM_FAILING_ATTEMPTS);
		ListenerSide retryable = run.side(RETRYABLE, RunContext.tiered(QueueType.QUORUM), BenchmarkListeners.BATCH);
		Map<String, Alternation.Measurement> sides = new LinkedHashMap<>();
		sides.put(PLAIN, HappyPathBenchmark.backlogOf(run, run.side(PLAIN, RunContext.PLAIN, BenchmarkListeners.BATCH),
				messages));
		sides.put(RETRYABLE, HappyPathBenchmark.backlogOf(run, retryable, messages));
		sides.put(RETRYABLE_STORM, FailureStormBenchmark.tieredStorm(run, retryable, stormMessages, storm,
				stormMessages - storm.failingCount(stormMessages)));
		Alternation.Outcome outcome = run.alternate("batch-listener", sides);
		SideSeries quorum = outcome.series(RETRYABLE);
		return new Comparison("batch-listener", "7. Batch listener: throughput without failures and in a storm",
				"messages/s (storm: healthy messages/s)", messages, outcome.allSeries(),
				List.of(RatioSeries.of("batch @RetryableListener (quorum tiers) ÷ " + PLAIN, quorum,
						outcome.series(PLAIN), 0.97),
						RatioSeries.of("batch @RetryableListener storm ÷ without failures",
								outcome.series(RETRYABLE_STORM), quorum, 0.9)),
				outcome.orders());
	}

}
