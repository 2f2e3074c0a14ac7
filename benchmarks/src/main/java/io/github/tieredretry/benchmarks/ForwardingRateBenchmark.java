package io.github.tieredretry.benchmarks;

import java.util.List;
import java.util.Map;

import io.github.tieredretry.benchmarks.app.BenchmarkListeners;
import io.github.tieredretry.benchmarks.app.Workload;
import io.github.tieredretry.benchmarks.broker.MessagePublisher.Failures;
import io.github.tieredretry.benchmarks.report.Comparison;
import io.github.tieredretry.benchmarks.report.RatioSeries;
import io.github.tieredretry.benchmarks.report.SideSeries;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.policy.TierLadder;
import io.github.tieredretry.topology.RetryTopology;

/**
 * Benchmark 3: how many failures per second a consumer forwards to a tier, each publish confirmed before
 * the original is acknowledged. Every message fails once: forwarded by the starter, or republished by
 * Spring AMQP's {@code RepublishMessageRecovererWithConfirms} (blocking retry with no retries, then the
 * recoverer) into the same tier queue through the same exchange; and, as the floor of what a confirmed
 * forward costs on this broker, a raw loop of confirmed publishes of the same messages.
 */
final class ForwardingRateBenchmark {

	static final String TIERED = "@RetryableListener forward";

	static final String RECOVERER = "RepublishMessageRecovererWithConfirms";

	static final String RAW = "raw confirmed publish loop";

	private ForwardingRateBenchmark() {
	}

	static Comparison run(RunContext run) {
		int messages = run.settings().forwardingMessages();
		ListenerSide tiered = run.side(TIERED, RunContext.TIERED, BenchmarkListeners.FORWARDING);
		ListenerSide recoverer = run.side(RECOVERER, RunContext.RECOVERER, BenchmarkListeners.FORWARDING);
		String rawRoutingKey = run.runId() + "-raw-forwarding";
		run.purgeForwardingTier();
		Map<String, Alternation.Measurement> measurements = Map.of(
				TIERED, (label, roundId) -> forwardAll(run, tiered, roundId, messages),
				RECOVERER, (label, roundId) -> forwardAll(run, recoverer, roundId, messages),
				RAW, (label, roundId) -> rawLoop(run, rawRoutingKey, messages));
		Alternation.Outcome outcome = Alternation.run("forwarding", run.runId() + "-fw", List.of(TIERED, RECOVERER, RAW),
				run.settings().repeats(), run.settings().warmups(),
				(label, roundId) -> measurements.get(label).measure(label, roundId), run::log);
		SideSeries tieredSeries = new SideSeries(TIERED, outcome.values().get(TIERED));
		SideSeries recovererSeries = new SideSeries(RECOVERER, outcome.values().get(RECOVERER));
		SideSeries rawSeries = new SideSeries(RAW, outcome.values().get(RAW));
		return new Comparison("forwarding", "3. Forwarding rate: confirmed forwards to a tier", "forwards/s", messages,
				List.of(tieredSeries, recovererSeries, rawSeries),
				List.of(RatioSeries.of("starter ÷ RepublishMessageRecovererWithConfirms", tieredSeries, recovererSeries,
						1.0), RatioSeries.of("starter ÷ raw confirmed publish loop", tieredSeries, rawSeries, Double.NaN)),
				outcome.orders());
	}

	/**
	 * Every message of a backlog fails once and is forwarded.
	 * @return forwards per second, from the first delivery to the last confirmed forward
	 */
	private static double forwardAll(RunContext run, ListenerSide side, String roundId, int messages) {
		Workload.Round round = side.prepare(run.broker(), roundId, 0, 0, messages, false);
		run.publisher().publishBacklog(side.queue(), roundId, messages, Failures.all(1));
		side.start();
		try {
			long first = round.awaitFirstDelivery(RunContext.roundTimeout(messages));
			round.awaitAllForwarded(RunContext.roundTimeout(messages));
			return HappyPathBenchmark.perSecond(messages, round.lastForwardNanos() - first);
		}
		finally {
			side.stop();
			run.purgeForwardingTier();
		}
	}

	private static double rawLoop(RunContext run, String routingKey, int messages) {
		try {
			long nanos = run.publisher().confirmedPublishLoop(RetryTopology.DELAY_EXCHANGE, routingKey,
					Map.of(RetryHeaders.TIER, TierLadder.nameOf(BenchmarkSettings.FORWARDING_TIER)), messages);
			return HappyPathBenchmark.perSecond(messages, nanos);
		}
		finally {
			run.purgeForwardingTier();
		}
	}

}
