package io.github.tieredretry.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.LongStream;

import io.github.tieredretry.benchmarks.app.BenchmarkListeners;
import io.github.tieredretry.benchmarks.app.Workload;
import io.github.tieredretry.benchmarks.broker.MessagePublisher.Failures;
import io.github.tieredretry.benchmarks.report.Comparison;
import io.github.tieredretry.benchmarks.report.JitterResult;
import io.github.tieredretry.benchmarks.report.RatioSeries;
import io.github.tieredretry.internal.policy.TierLadder;

/**
 * Benchmark 7: the peak arrival rate of retries at the listener after an outage, with and
 * without jitter. A backlog of messages is consumed while the listener's downstream is
 * down: every first attempt fails within a fraction of a second and is forwarded with the
 * same policy (one retry after 5 s by default); the downstream comes back before the
 * first retry is due. Without jitter the retries come back as they failed, in one wave;
 * with jitter 0.2 they are spread over 4 s to 6 s. Measured per side and repeat: the most
 * retries that reach the listener within any 100 ms, per second.
 */
final class JitterBenchmark {

	static final String WITHOUT_JITTER = "@RetryableListener, jitter 0 (exact delay)";

	static final String WITH_JITTER = "@RetryableListener with jitter";

	private JitterBenchmark() {
	}

	static JitterResult run(RunContext run) {
		BenchmarkSettings settings = run.settings();
		int messages = settings.jitterMessages();
		String withJitter = WITH_JITTER + " " + settings.jitterFactor();
		Map<String, Alternation.Measurement> sides = new LinkedHashMap<>();
		Map<String, Retries> lastRetries = new ConcurrentHashMap<>();
		Map<String, List<long[]>> lateness = new ConcurrentHashMap<>();
		for (String label : List.of(WITHOUT_JITTER, withJitter)) {
			ListenerSide side = run.side(label, RunContext.JITTER,
					WITHOUT_JITTER.equals(label) ? BenchmarkListeners.JITTER_OFF : BenchmarkListeners.JITTER);
			lateness.put(label, new ArrayList<>());
			sides.put(label, (ignored, roundId) -> {
				Retries retries = afterOutage(run, side, roundId, messages);
				lastRetries.put(label, retries);
				lateness.get(label).add(retries.latenessMillis());
				return retries.peakPerSecond();
			});
		}
		run.log("[jitter] " + messages + " messages fail together; one retry after "
				+ TierLadder.nameOf(settings.jitterDelay()) + ", jitter 0 and " + settings.jitterFactor() + ", tiers "
				+ RunContext
					.names(BenchmarkSettings.tiers(settings.jitterTiers(), BenchmarkSettings.DEFAULT_TIER_TYPE)));
		Alternation.Outcome outcome = run.alternate("jitter", sides);
		Comparison peaks = new Comparison("jitter",
				"7. Jitter: peak arrival rate of retries at the listener after an outage", "retries/s", messages,
				outcome.allSeries(),
				List.of(RatioSeries.of(
						"peak arrival rate of retries: without jitter ÷ with jitter " + settings.jitterFactor(),
						outcome.series(WITHOUT_JITTER), outcome.series(withJitter), Double.NaN)),
				outcome.orders());
		List<JitterResult.Side> results = new ArrayList<>();
		for (String label : sides.keySet()) {
			long[] allLateness = lateness.get(label).stream().flatMapToLong(LongStream::of).toArray();
			JitterResult.Side result = new JitterResult.Side(label, lastRetries.get(label).arrivalsMillis(),
					allLateness);
			run.log("[jitter] " + label + ": retries of the last repeat over " + result.spreadMillis()
					+ " ms; after retry-due p50 " + result.latenessPercentile(50) + " ms, p99 "
					+ result.latenessPercentile(99) + " ms, early " + result.earlyCount());
			results.add(result);
		}
		return new JitterResult(peaks, results);
	}

	// One round: the downstream is down while the backlog's first attempts fail and are
	// forwarded; it comes back, and the round ends when every retry was processed.
	private static Retries afterOutage(RunContext run, ListenerSide side, String roundId, int messages) {
		Workload.Round round = side.prepare(run.broker(), roundId, messages, messages, messages, true);
		run.publisher().publishBacklog(side.queue(), roundId, messages, Failures.NONE);
		round.downstreamDown(true);
		side.start();
		try {
			round.awaitAllForwarded(RunContext.roundTimeout(messages));
			round.downstreamDown(false);
			round.awaitAllProcessed(RunContext.roundTimeout(messages));
			return new Retries(round.firstDeliveryNanos(), round.retryArrivalNanos(), round.latenessMillis());
		}
		finally {
			round.downstreamDown(false);
			side.stop();
		}
	}

	/**
	 * When the retries of one round reached the listener.
	 *
	 * @param firstDeliveryNanos when the round's first message was delivered (and failed)
	 * @param arrivalNanos when each retry reached the listener
	 * @param latenessMillis how late each retry was after its {@code retry-due}
	 */
	record Retries(long firstDeliveryNanos, long[] arrivalNanos, long[] latenessMillis) {

		/**
		 * The most retries within any {@link BenchmarkSettings#JITTER_PEAK_WINDOW}, per
		 * second.
		 * @return retries per second
		 */
		double peakPerSecond() {
			long window = BenchmarkSettings.JITTER_PEAK_WINDOW.toNanos();
			long[] sorted = this.arrivalNanos.clone();
			Arrays.sort(sorted);
			int most = 0;
			int start = 0;
			for (int end = 0; end < sorted.length; end++) {
				while (sorted[end] - sorted[start] >= window) {
					start++;
				}
				most = Math.max(most, end - start + 1);
			}
			return most / (window / 1e9);
		}

		long[] arrivalsMillis() {
			return LongStream.of(this.arrivalNanos)
				.map((arrival) -> Duration.ofNanos(arrival - this.firstDeliveryNanos).toMillis())
				.sorted()
				.toArray();
		}

	}

}
