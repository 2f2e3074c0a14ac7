package io.github.tieredretry.benchmarks;

import io.github.tieredretry.benchmarks.app.BenchmarkListeners;
import io.github.tieredretry.benchmarks.app.Workload;
import io.github.tieredretry.benchmarks.broker.MessagePublisher.Failures;
import io.github.tieredretry.benchmarks.report.LatenessResult;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.topology.QueueType;

/**
 * Benchmark 4: how late retries come back through one tier, a quorum queue (the default).
 * Messages are published at a steady rate the consumer keeps up with (a backlog would
 * measure the backlog, not the tier); each fails once, waits in the tier and is processed
 * on its retry, where the listener records how long after its {@code retry-due} time it
 * arrived.
 */
final class DelayAccuracyBenchmark {

	private DelayAccuracyBenchmark() {
	}

	static LatenessResult run(RunContext run) {
		int messages = run.settings().accuracyMessages();
		int rate = run.settings().accuracyRate();
		QueueType type = BenchmarkSettings.DEFAULT_TIER_TYPE;
		ListenerSide side = run.side("accuracy", RunContext.tiered(type), BenchmarkListeners.ACCURACY);
		String tier = TierLadder.nameOf(run.settings().policyDelays(BenchmarkListeners.ACCURACY, type).get(0)) + " ("
				+ BenchmarkSettings.typeName(type) + ")";
		String roundId = run.runId() + "-da";
		Workload.Round round = side.prepare(run.broker(), roundId, messages, 0, messages, true);
		side.start();
		try {
			run.log("[delay-accuracy] publishing " + messages + " messages at " + rate + "/s through tier " + tier);
			run.publisher().publishPaced(side.queue(), roundId, messages, rate, Failures.all(1));
			round.awaitAllProcessed(RunContext.roundTimeout(messages));
		}
		finally {
			side.stop();
		}
		LatenessResult result = new LatenessResult(tier, messages, rate, round.latenessMillis());
		run.log("[delay-accuracy] p50 " + result.percentile(50) + " ms, p99 " + result.percentile(99) + " ms, max "
				+ result.max() + " ms, early " + result.earlyCount());
		return result;
	}

}
