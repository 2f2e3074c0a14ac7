package io.github.tieredretry.benchmarks;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.tieredretry.benchmarks.app.BenchmarkListeners;
import io.github.tieredretry.benchmarks.app.Workload;
import io.github.tieredretry.benchmarks.broker.MessagePublisher.Failures;
import io.github.tieredretry.benchmarks.report.AmqpListenerResult;
import io.github.tieredretry.benchmarks.report.Comparison;
import io.github.tieredretry.benchmarks.report.RatioSeries;
import io.github.tieredretry.benchmarks.report.SideSeries;
import org.jspecify.annotations.Nullable;

/**
 * Benchmark 11 (issue #33): {@code @RetryableListener} on the RabbitMQ AMQP 1.0 client
 * (Spring AMQP's {@code RabbitAmqpListenerContainer}, which the starter wraps in its AMQP
 * 1.0 listener, settling each delivery itself) against a plain listener of the same
 * client and container settings, in one application, on classic work queues. Measured:
 * the throughput of a backlog without failures, and of a backlog whose every message
 * fails once (forwarded to a quorum tier with a confirm, accepted, processed when it
 * comes back), from the first delivery until the last message is processed. On a broker
 * older than 4.0 nothing runs, and the result says why.
 */
final class AmqpListenerBenchmark {

	static final String PLAIN = "plain AMQP 1.0 listener";

	static final String RETRYABLE = "@RetryableListener on the AMQP 1.0 client, quorum tiers";

	static final String RETRYABLE_STORM = "@RetryableListener on the AMQP 1.0 client, every message fails once";

	private AmqpListenerBenchmark() {
	}

	static AmqpListenerResult run(RunContext run) {
		String version = run.broker().version();
		String broker = "RabbitMQ " + version;
		String notRun = whyNotRun(version);
		if (notRun != null) {
			run.log("[amqp-listener] not run: " + notRun);
			return AmqpListenerResult.notRun(broker, notRun);
		}
		int messages = run.settings().happyMessages();
		int stormMessages = run.settings().stormMessages();
		ListenerSide plain = run.side(PLAIN, RunContext.AMQP_LISTENER, BenchmarkListeners.AMQP_PLAIN);
		ListenerSide retryable = run.side(RETRYABLE, RunContext.AMQP_LISTENER, BenchmarkListeners.AMQP_RETRYABLE);
		Map<String, Alternation.Measurement> sides = new LinkedHashMap<>();
		sides.put(PLAIN, HappyPathBenchmark.backlogOf(run, plain, messages));
		sides.put(RETRYABLE, HappyPathBenchmark.backlogOf(run, retryable, messages));
		sides.put(RETRYABLE_STORM, (label, roundId) -> storm(run, retryable, label, roundId, stormMessages));
		Alternation.Outcome outcome = run.alternate("amqp-listener", sides);
		SideSeries clean = outcome.series(RETRYABLE);
		Comparison throughput = new Comparison("amqp-listener",
				"11. AMQP 1.0 listener: throughput without failures and while every message fails once", "messages/s",
				messages, outcome.allSeries(),
				List.of(RatioSeries.of("@RetryableListener on the AMQP 1.0 client ÷ " + PLAIN, clean,
						outcome.series(PLAIN), 0.97),
						RatioSeries.of("@RetryableListener on the AMQP 1.0 client: every message failing once ÷ "
								+ "without failures", outcome.series(RETRYABLE_STORM), clean, Double.NaN)),
				outcome.orders());
		return new AmqpListenerResult(broker, null, throughput);
	}

	/**
	 * Why the benchmark cannot run.
	 * @param version the broker's version, e.g. {@code 3.10.8}
	 * @return the reason, or {@code null} when it can run
	 */
	static @Nullable String whyNotRun(String version) {
		if (majorVersion(version) < 4) {
			return "RabbitMQ " + version + " has no AMQP 1.0 client support (4.0 or later has)";
		}
		return null;
	}

	// The major version, or 0 when the version cannot be read.
	private static int majorVersion(String version) {
		try {
			return Integer.parseInt(version.split("[.+-]")[0].trim());
		}
		catch (NumberFormatException ex) {
			return 0;
		}
	}

	// A backlog whose every message fails once: each is forwarded to the first tier and
	// processed when it comes back. Messages per second from the first delivery until the
	// last message is processed, the wait of the last retry included. On the AMQP 1.0
	// client 1.1.0, about one such round in five of 20,000 messages waited for one
	// delivery until it timed out: the broker held it unacknowledged on the consumer,
	// every thread of the application idle; on 1.5.0 (which the build uses), none of
	// seven did.
	private static double storm(RunContext run, ListenerSide side, String label, String roundId, int messages) {
		Workload.Round round = side.prepare(run.broker(), roundId, messages, 0, messages, false);
		run.publisher().publishBacklog(side.queue(), roundId, messages, Failures.all(1));
		side.start();
		try {
			long first = round.awaitFirstDelivery(RunContext.roundTimeout(messages));
			round.awaitAllForwarded(RunContext.roundTimeout(messages));
			round.awaitAllProcessed(RunContext.roundTimeout(messages));
			double forwarded = HappyPathBenchmark.perSecond(messages, round.lastForwardNanos() - first);
			double processed = HappyPathBenchmark.perSecond(messages, round.lastProcessedNanos() - first);
			run.log(String.format(java.util.Locale.ROOT,
					"[amqp-listener] %s: %,.0f failed messages forwarded/s, %,.0f processed/s after their retry", label,
					forwarded, processed));
			return processed;
		}
		finally {
			side.stop();
		}
	}

}
