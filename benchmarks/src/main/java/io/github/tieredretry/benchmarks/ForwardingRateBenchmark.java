package io.github.tieredretry.benchmarks;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.tieredretry.benchmarks.app.BenchmarkListeners;
import io.github.tieredretry.benchmarks.app.Workload;
import io.github.tieredretry.benchmarks.broker.MessagePublisher.Failures;
import io.github.tieredretry.benchmarks.report.Comparison;
import io.github.tieredretry.benchmarks.report.RatioSeries;
import io.github.tieredretry.benchmarks.report.SideSeries;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.topology.QueueType;

/**
 * Benchmark 3: how many failures per second a consumer forwards to a tier, each publish
 * confirmed before the original is acknowledged. Every message fails once: forwarded by
 * the starter (into a quorum tier, and into a classic one), by the limit side (a consumer
 * written against the RabbitMQ Java client), or republished by Spring AMQP's
 * {@code RepublishMessageRecovererWithConfirms} (blocking retry with no retries, then the
 * recoverer) into the same quorum tier through the same exchange; and, as the floor of
 * what a confirmed forward costs on this broker, a raw loop of confirmed publishes of the
 * same messages.
 */
final class ForwardingRateBenchmark {

	static final String TIERED = "@RetryableListener forward, quorum tier";

	static final String TIERED_CLASSIC = "@RetryableListener forward, classic tier";

	static final String LIMIT = "limit side forward, quorum tier";

	static final String RECOVERER = "RepublishMessageRecovererWithConfirms, quorum tier";

	static final String RAW = "raw confirmed publish loop, quorum tier";

	/**
	 * Failures per repeat for the sides that wait for one confirm at a time (the
	 * recoverer and the raw loop): at most this many, so that their rounds, already
	 * seconds long at their rate, do not take minutes. The sides that pipeline forwards
	 * take the full count: a round of a few thousand lasts half a second, and its rate
	 * then measures the consumers' start more than the forwarding.
	 */
	static final int ONE_AT_A_TIME_MESSAGES = 3_000;

	private ForwardingRateBenchmark() {
	}

	static Comparison run(RunContext run) {
		int messages = run.settings().forwardingMessages();
		String rawRoutingKey = run.runId() + "-raw-forwarding";
		Duration rawTier = BenchmarkSettings.forwardingTier(BenchmarkSettings.DEFAULT_TIER_TYPE);
		run.purgeForwardingTiers();
		Map<String, Alternation.Measurement> sides = new LinkedHashMap<>();
		sides.put(TIERED, forwardAll(run,
				run.side(TIERED, RunContext.tiered(QueueType.QUORUM), BenchmarkListeners.FORWARDING), messages));
		sides.put(TIERED_CLASSIC,
				forwardAll(run,
						run.side(TIERED_CLASSIC, RunContext.tiered(QueueType.CLASSIC), BenchmarkListeners.FORWARDING),
						messages));
		sides.put(LIMIT,
				forwardAll(run, run.limitSide(LIMIT, QueueType.QUORUM, BenchmarkListeners.FORWARDING), messages));
		int oneAtATime = Math.min(messages, ONE_AT_A_TIME_MESSAGES);
		sides.put(RECOVERER,
				forwardAll(run, run.side(RECOVERER, RunContext.RECOVERER, BenchmarkListeners.FORWARDING), oneAtATime));
		sides.put(RAW, (label, roundId) -> rawLoop(run, rawRoutingKey, rawTier, oneAtATime));
		Alternation.Outcome outcome = run.alternate("forwarding", sides);
		SideSeries tiered = outcome.series(TIERED);
		return new Comparison("forwarding", "3. Forwarding rate: confirmed forwards to a tier", "forwards/s", messages,
				outcome.allSeries(),
				List.of(RatioSeries.of("starter ÷ RepublishMessageRecovererWithConfirms, quorum tier", tiered,
						outcome.series(RECOVERER), 1.0),
						RatioSeries.of("starter ÷ limit side, quorum tier", tiered, outcome.series(LIMIT), Double.NaN),
						RatioSeries.of("starter: quorum ÷ classic tier", tiered, outcome.series(TIERED_CLASSIC),
								Double.NaN),
						RatioSeries.of("starter ÷ raw confirmed publish loop, quorum tier", tiered, outcome.series(RAW),
								Double.NaN)),
				outcome.orders());
	}

	static Alternation.Measurement forwardAll(RunContext run, MeasuredSide side, int messages) {
		return (label, roundId) -> forwardAll(run, side, roundId, messages);
	}

	// Every message of a backlog fails once and is forwarded.
	// Returns forwards per second, from the first delivery to the last confirmed forward
	private static double forwardAll(RunContext run, MeasuredSide side, String roundId, int messages) {
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
			run.purgeForwardingTiers();
		}
	}

	private static double rawLoop(RunContext run, String routingKey, Duration tier, int messages) {
		try {
			long nanos = run.publisher()
				.confirmedPublishLoop(RetryTopology.DELAY_EXCHANGE, routingKey,
						Map.of(RetryHeaders.TIER, TierLadder.nameOf(tier)), messages);
			return HappyPathBenchmark.perSecond(messages, nanos);
		}
		finally {
			run.purgeForwardingTiers();
		}
	}

}
