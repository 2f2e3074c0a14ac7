package io.github.tieredretry.benchmarks;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import javax.imageio.ImageIO;

import com.rabbitmq.client.ConnectionFactory;
import io.github.tieredretry.benchmarks.broker.BrokerSettings;
import io.github.tieredretry.benchmarks.report.BenchmarkResults;
import io.github.tieredretry.benchmarks.report.Comparison;
import io.github.tieredretry.benchmarks.report.LatenessResult;
import io.github.tieredretry.benchmarks.report.MarkdownReport;
import io.github.tieredretry.benchmarks.report.ObjectCounts;
import io.github.tieredretry.benchmarks.report.OutageResult;
import io.github.tieredretry.benchmarks.report.RatioSeries;
import io.github.tieredretry.benchmarks.report.SideSeries;
import io.github.tieredretry.benchmarks.report.TopologyResult;
import io.github.tieredretry.testsupport.TestBroker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The harness, with tiny sizes, against the integration tests' broker: every benchmark
 * runs and produces sane results, charts and a report. It checks that the harness works,
 * never how fast anything is.
 */
class BenchmarkHarnessSmokeIntegrationTests {

	@TempDir
	Path output;

	@Test
	void everyBenchmarkProducesResultsChartsAndAReport() throws IOException {
		ConnectionFactory client = TestBroker.get().clientConnectionFactory();
		BrokerSettings broker = new BrokerSettings(client.getHost(), client.getPort(), client.getUsername(),
				client.getPassword());
		BenchmarkSettings settings = BenchmarkSettings.smoke(broker, this.output);

		BenchmarkResults results = new BenchmarkRun(settings, System.out::println).run();
		List<Path> written = new MarkdownReport(this.output).write(results);

		assertThat(results.comparisons()).extracting(Comparison::key)
			.containsExactly("happy-path", "failure-storm", "forwarding", "batch-listener");
		for (Comparison comparison : results.comparisons()) {
			assertThat(comparison.sides()).allSatisfy((side) -> assertMeasuredOncePerRepeat(side, settings.repeats()));
			assertThat(comparison.ratios()).isNotEmpty()
				.allSatisfy((ratio) -> assertThat(ratio.ratios()).hasSize(settings.repeats())
					.allSatisfy((value) -> assertThat(value).isPositive().isFinite()));
		}
		assertThat(results.happyPath().sides()).extracting(SideSeries::label)
			.containsExactly(HappyPathBenchmark.PLAIN, HappyPathBenchmark.RETRYABLE,
					HappyPathBenchmark.RETRYABLE_CLASSIC, HappyPathBenchmark.OBSERVED, HappyPathBenchmark.TRACED);
		assertThat(results.happyPath().ratios()).extracting(RatioSeries::target)
			.containsExactly(0.97, Double.NaN, 0.97, Double.NaN);
		assertThat(results.failureStorm().sides()).extracting(SideSeries::label)
			.containsExactly(FailureStormBenchmark.TIERED_NO_FAILURES, FailureStormBenchmark.TIERED_STORM,
					FailureStormBenchmark.LIMIT_NO_FAILURES, FailureStormBenchmark.LIMIT_STORM,
					FailureStormBenchmark.TIERED_CLASSIC_STORM, FailureStormBenchmark.LIMIT_CLASSIC_STORM,
					FailureStormBenchmark.BLOCKING_STORM);
		assertThat(results.failureStorm().ratios()).extracting(RatioSeries::target)
			.containsExactly(0.95, 0.9, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, 50.0);
		assertThat(results.forwarding().sides()).extracting(SideSeries::label)
			.containsExactly(ForwardingRateBenchmark.TIERED, ForwardingRateBenchmark.TIERED_CLASSIC,
					ForwardingRateBenchmark.LIMIT, ForwardingRateBenchmark.RECOVERER, ForwardingRateBenchmark.RAW);
		assertThat(results.batchListener().sides()).extracting(SideSeries::label)
			.containsExactly(BatchListenerBenchmark.PLAIN, BatchListenerBenchmark.RETRYABLE,
					BatchListenerBenchmark.RETRYABLE_STORM);
		assertThat(results.batchListener().ratios()).extracting(RatioSeries::target).containsExactly(0.97, 0.9);

		LatenessResult lateness = results.delayAccuracy();
		assertThat(lateness.latenessMillis()).hasSize(settings.accuracyMessages());
		assertThat(lateness.tier()).endsWith("(quorum)");

		TopologyResult topology = results.topology();
		int tiers = BenchmarkSettings.TOPOLOGY_TIERS.size();
		int listeners = settings.topologyListeners();
		assertThat(topology.tiered()).isEqualTo(new ObjectCounts(tiers + 1, 3, tiers + 1 + listeners));
		assertThat(topology.perQueue()).isEqualTo(new ObjectCounts(listeners * (tiers + 1), 0, 0));
		assertThat(topology.verifiedOnBroker()).isTrue();

		OutageResult outage = results.outage();
		assertThat(outage.sides()).extracting(OutageResult.Side::label)
			.containsExactly(OutageBenchmark.WITH_BREAKER, OutageBenchmark.WITHOUT_BREAKER);
		assertThat(outage.orders()).hasSize(settings.outageRepeats());
		long streamed = settings.outageRate() * settings.outageLeadIn().plus(settings.outage()).toMillis() / 1000;
		for (OutageResult.Side side : outage.sides()) {
			assertThat(side.rounds()).as(side.label()).hasSize(settings.outageRepeats()).allSatisfy((round) -> {
				// The stream ran through the lead-in and the outage, and every message it
				// sent was settled.
				assertThat((long) round.published()).isGreaterThan(streamed / 2);
				assertThat(round.processed() + round.parked()).isEqualTo(round.published());
				assertThat(round.drainSeconds()).isNotNegative().isFinite();
			});
		}
		// The outage outlasted the policy's retries: without a breaker, messages were
		// parked.
		assertThat(outage.sides().get(1).rounds()).allSatisfy((round) -> assertThat(round.parked()).isPositive());

		assertThat(written).filteredOn((file) -> file.toString().endsWith(".png"))
			.extracting((file) -> file.getFileName().toString())
			.containsExactlyInAnyOrder("happy-path.png", "failure-storm.png", "forwarding.png", "batch-listener.png",
					"ratios.png", "delay-lateness.png", "topology.png", "outage-parked.png", "outage-drain.png")
			.hasSize(9);
		for (Path chart : written) {
			if (chart.toString().endsWith(".png")) {
				BufferedImage image = ImageIO.read(chart.toFile());
				assertThat(image).as(chart.toString()).isNotNull();
				assertThat(image.getWidth()).isPositive();
			}
		}
		String report = Files.readString(this.output.resolve("benchmarks.md"));
		assertThat(report).contains(MarkdownReport.START_MARKER, MarkdownReport.END_MARKER,
				"| Benchmark | Ratio | min | median | max |", "![Lateness histogram](benchmarks/delay-lateness.png)",
				"| @RetryableListener ÷ limit side, storm, quorum tiers |", "| Tier queues | quorum (the default)",
				"### Outage: messages parked and time to drain", "![Messages parked](benchmarks/outage-parked.png)",
				"| messages parked | " + OutageBenchmark.WITH_BREAKER + " |",
				"| time to drain (s) | " + OutageBenchmark.WITHOUT_BREAKER + " |", "| Outage | 2s outage");
		assertThat(Files.readAllLines(this.output.resolve("benchmarks/samples.csv"))).hasSizeGreaterThan(1)
			.filteredOn((line) -> line.startsWith("outage,"))
			.hasSize(4 * 2 * settings.outageRepeats());
	}

	@Test
	void aSecondReportReplacesTheResultsAndKeepsWhatPeopleWrote() throws IOException {
		Path document = this.output.resolve("benchmarks.md");
		Files.writeString(document, "# Benchmarks\n\nMethod, written by hand.\n\n" + MarkdownReport.START_MARKER
				+ "\nold results\n" + MarkdownReport.END_MARKER + "\n\n## Findings\n\nAlso by hand.\n");
		BenchmarkResults results = new BenchmarkResults(
				io.github.tieredretry.benchmarks.report.MachineInfo.current("RabbitMQ test"), java.util.Map.of(),
				java.time.Instant.now(), java.time.Duration.ofSeconds(1), List.of("end: 0.1, 0.1, 0.1"), null, null,
				null, null, null, null, null);

		new MarkdownReport(this.output).write(results);

		String report = Files.readString(document);
		assertThat(report).startsWith("# Benchmarks\n\nMethod, written by hand.\n\n" + MarkdownReport.START_MARKER)
			.endsWith(MarkdownReport.END_MARKER + "\n\n## Findings\n\nAlso by hand.\n")
			.doesNotContain("old results")
			.contains("RabbitMQ test");
	}

	private static void assertMeasuredOncePerRepeat(SideSeries side, int repeats) {
		assertThat(side.values()).as(side.label())
			.hasSize(repeats)
			.allSatisfy((value) -> assertThat(value).isPositive().isFinite());
	}

}
