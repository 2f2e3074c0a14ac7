package io.github.tieredretry.benchmarks;

import java.nio.file.Path;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.List;

import io.github.tieredretry.benchmarks.report.AmqpListenerResult;
import io.github.tieredretry.benchmarks.report.BenchmarkResults;
import io.github.tieredretry.benchmarks.report.BrokerBackendResult;
import io.github.tieredretry.benchmarks.report.Comparison;
import io.github.tieredretry.benchmarks.report.DelayedSendResult;
import io.github.tieredretry.benchmarks.report.JitterResult;
import io.github.tieredretry.benchmarks.report.MarkdownReport;
import io.github.tieredretry.benchmarks.report.OutageResult;
import io.github.tieredretry.benchmarks.report.RatioSeries;

/**
 * Runs the benchmarks and writes the report:
 * {@code ./mvnw -B -pl benchmarks -Pbenchmarks -DskipTests verify} (see
 * {@code docs/benchmarks.md}).
 */
public final class BenchmarkHarness {

	private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss");

	private BenchmarkHarness() {
	}

	public static void main(String[] args) {
		System.setProperty("java.awt.headless", "true");
		BenchmarkSettings settings = BenchmarkSettings.fromSystemProperties();
		BenchmarkResults results = new BenchmarkRun(settings, BenchmarkHarness::log).run();
		List<Path> written = new MarkdownReport(settings.output()).write(results);
		log("Results:");
		for (Comparison comparison : results.comparisons()) {
			for (RatioSeries ratio : comparison.ratios()) {
				log(String.format(java.util.Locale.ROOT, "  %s: %s = %.3f (min %.3f, max %.3f)%s", comparison.title(),
						ratio.label(), ratio.summary().median(), ratio.summary().min(), ratio.summary().max(),
						ratio.hasTarget() ? (ratio.met() ? ", target met" : ", TARGET MISSED") : ""));
			}
		}
		if (results.delayAccuracy() != null) {
			log("  Delay accuracy: p99 " + results.delayAccuracy().percentile(99) + " ms, early "
					+ results.delayAccuracy().earlyCount()
					+ (results.delayAccuracy().met() ? ", target met" : ", TARGET MISSED"));
		}
		if (results.topology() != null) {
			log("  Topology: tiered " + results.topology().tiered() + ", per queue " + results.topology().perQueue());
		}
		if (results.outage() != null) {
			for (OutageResult.Side side : results.outage().sides()) {
				log(String.format(java.util.Locale.ROOT,
						"  Outage of %s, %s: %,.0f parked, drained in %.2f s (medians)", results.outage().outage(),
						side.label(), side.parked().median(), side.drainSeconds().median()));
			}
		}
		if (results.jitter() != null) {
			for (JitterResult.Side side : results.jitter().sides()) {
				log("  Jitter, " + side.label() + ": retries of the last repeat over " + side.spreadMillis()
						+ " ms, early " + side.earlyCount() + ", p99 " + side.latenessPercentile(99)
						+ " ms after retry-due");
			}
		}
		BrokerBackendResult brokerBackend = results.brokerBackend();
		if (brokerBackend != null && !brokerBackend.ran()) {
			log("  Broker backend: not run: " + brokerBackend.notRun());
		}
		else if (brokerBackend != null) {
			for (BrokerBackendResult.Lateness side : brokerBackend.accuracy()) {
				log("  Broker backend, delay accuracy, " + side.label() + ": p50 " + side.percentile(50) + " ms, p99 "
						+ side.percentile(99) + " ms, max " + side.max() + " ms, early " + side.earlyCount() + " of "
						+ side.count());
			}
			BrokerBackendResult.Topology topology = brokerBackend.topology();
			if (topology != null) {
				log("  Broker backend, topology of " + topology.listeners() + " listeners: on the tiers "
						+ topology.onTiers() + ", on the broker backend " + topology.onBroker());
			}
		}
		if (results.delayedSend() != null) {
			for (DelayedSendResult.Lateness side : results.delayedSend().precision()) {
				log("  Delayed sends, " + side.label() + ": p50 " + side.percentile(50) + " ms, p99 "
						+ side.percentile(99) + " ms, max " + side.max() + " ms, "
						+ ((side.earlyCount() > 0) ? "EARLY: " + side.earlyCount() + " OF " + side.count()
								+ " ARRIVED BEFORE THEIR DELAY HAD PASSED" : "none early of " + side.count()));
			}
		}
		AmqpListenerResult amqpListener = results.amqpListener();
		if (amqpListener != null && !amqpListener.ran()) {
			log("  AMQP 1.0 listener: not run: " + amqpListener.notRun());
		}
		written.forEach((file) -> log("Wrote " + file.toAbsolutePath().normalize()));
		// Spring and the AMQP client are closed; exit even if a library left a non-daemon
		// thread behind.
		System.exit(0);
	}

	private static void log(String line) {
		System.out.println(LocalTime.now().format(TIME) + " " + line);
	}

}
