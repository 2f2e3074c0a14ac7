package io.github.tieredretry.benchmarks;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import javax.imageio.ImageIO;

import com.rabbitmq.client.ConnectionFactory;
import io.github.tieredretry.benchmarks.broker.BrokerSettings;
import io.github.tieredretry.benchmarks.report.AmqpListenerResult;
import io.github.tieredretry.benchmarks.report.BenchmarkResults;
import io.github.tieredretry.benchmarks.report.BrokerBackendResult;
import io.github.tieredretry.benchmarks.report.Comparison;
import io.github.tieredretry.benchmarks.report.DelayedSendResult;
import io.github.tieredretry.benchmarks.report.JitterResult;
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
import static org.assertj.core.api.Assertions.tuple;

/**
 * The harness, with tiny sizes, against the integration tests' broker: every benchmark
 * runs and produces sane results, charts and a report. It checks that the harness works,
 * never how fast anything is. The broker backend's benchmark runs on RabbitMQ 4.3 or
 * later, the AMQP 1.0 listener's on 4.0 or later; before, each reports that it did not
 * run, and why.
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
		boolean delayedRetry = TestBroker.get().isAtLeast(4, 3);
		boolean amqpClient = TestBroker.get().isAtLeast(4, 0);

		BenchmarkResults results = new BenchmarkRun(settings, System.out::println).run();
		List<Path> written = new MarkdownReport(this.output).write(results);

		List<String> comparisons = new ArrayList<>(
				List.of("happy-path", "failure-storm", "forwarding", "jitter", "batch-listener"));
		if (delayedRetry) {
			comparisons.addAll(List.of("broker-backend-storm", "broker-backend-forwarding"));
		}
		comparisons.add("delayed-send");
		if (amqpClient) {
			comparisons.add("amqp-listener");
		}
		assertThat(results.comparisons()).extracting(Comparison::key).containsExactlyElementsOf(comparisons);
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

		assertThat(results.delayedSend().throughput().sides()).extracting(SideSeries::label)
			.containsExactly(DelayedSendBenchmark.DELAYED_ONE_AT_A_TIME, DelayedSendBenchmark.PLAIN_ONE_AT_A_TIME,
					DelayedSendBenchmark.DELAYED_PIPELINED, DelayedSendBenchmark.PLAIN_PIPELINED);
		// A delay of the smallest tier, one hop; three times it, two hops (the next tier,
		// then the smallest); every send arrived, none early.
		assertThat(results.delayedSend().tiers()).containsExactly("101ms", "201ms", "2820001ms");
		assertThat(results.delayedSend().precision())
			.extracting(DelayedSendResult.Lateness::delay, DelayedSendResult.Lateness::hops)
			.containsExactly(tuple("100ms", "101ms"), tuple("300ms", "201ms + 101ms"));
		assertThat(results.delayedSend().precision()).allSatisfy((side) -> {
			assertThat(side.count()).as(side.label()).isEqualTo(settings.delayedSendMessages() * settings.repeats());
			assertThat(side.earlyCount()).as(side.label()).isZero();
		});

		LatenessResult lateness = results.delayAccuracy();
		assertThat(lateness.latenessMillis()).hasSize(settings.accuracyMessages());
		assertThat(lateness.tier()).endsWith("(quorum)");

		TopologyResult topology = results.topology();
		int tiers = BenchmarkSettings.TOPOLOGY_TIERS.size();
		int listeners = settings.topologyListeners();
		assertThat(topology.tiered()).isEqualTo(retryObjects(tiers, listeners));
		assertThat(topology.perQueue()).isEqualTo(new ObjectCounts(listeners * (tiers + 1), 0, 0));
		assertThat(topology.verifiedOnBroker()).isTrue();

		JitterResult jitter = results.jitter();
		assertThat(jitter.peaks().sides()).extracting(SideSeries::label)
			.containsExactly(JitterBenchmark.WITHOUT_JITTER, JitterBenchmark.WITH_JITTER + " 0.5");
		assertThat(jitter.sides()).allSatisfy((side) -> {
			// Every retry of the last repeat arrived, none before its drawn delay.
			assertThat(side.arrivalsMillis()).as(side.label()).hasSize(settings.jitterMessages());
			assertThat(side.earlyCount()).as(side.label()).isZero();
		});
		// 1s ± 50% through tiers of 200 ms and 1 s: spread over about a second.
		assertThat(jitter.sides().get(1).spreadMillis()).isGreaterThan(500);

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

		List<String> charts = new ArrayList<>(
				List.of("happy-path.png", "failure-storm.png", "forwarding.png", "jitter.png", "jitter-arrivals.png",
						"batch-listener.png", "ratios.png", "delay-lateness.png", "topology.png", "outage-parked.png",
						"outage-drain.png", "delayed-send.png", "delayed-send-lateness.png"));
		if (amqpClient) {
			charts.add("amqp-listener.png");
		}
		if (delayedRetry) {
			charts.addAll(List.of("broker-backend-storm.png", "broker-backend-forwarding.png",
					"broker-backend-lateness.png", "broker-backend-topology.png"));
		}
		assertThat(written).filteredOn((file) -> file.toString().endsWith(".png"))
			.extracting((file) -> file.getFileName().toString())
			.containsExactlyInAnyOrderElementsOf(charts);
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
				"| time to drain (s) | " + OutageBenchmark.WITHOUT_BREAKER + " |", "| Outage | 2s outage",
				"### 7. Jitter: peak arrival rate of retries", "![Retries arriving after an outage]",
				"| peak arrival rate of retries: without jitter ÷ with jitter 0.5 |",
				"### 10. Delayed sends: precision, and sends per second beside a plain confirmed publish",
				"![Delayed sends: lateness](benchmarks/delayed-send-lateness.png)",
				"| delay 300ms: 2 hops (201ms + 101ms) | 40 of 40 |",
				"#### 10. Delayed sends: sends per second beside a plain confirmed publish");
		assertThat(Files.readAllLines(this.output.resolve("benchmarks/samples.csv"))).hasSizeGreaterThan(1)
			.filteredOn((line) -> line.startsWith("outage,"))
			.hasSize(4 * 2 * settings.outageRepeats());

		AmqpListenerResult amqpListener = results.amqpListener();
		if (amqpClient) {
			assertThat(amqpListener.notRun()).isNull();
			assertThat(amqpListener.throughput().sides()).extracting(SideSeries::label)
				.containsExactly(AmqpListenerBenchmark.PLAIN, AmqpListenerBenchmark.RETRYABLE,
						AmqpListenerBenchmark.RETRYABLE_STORM);
			assertThat(amqpListener.throughput().ratios()).extracting(RatioSeries::target)
				.containsExactly(0.97, Double.NaN);
			assertThat(report)
				.contains("### 11. AMQP 1.0 listener: throughput without failures and while every message fails once",
						"![11. AMQP 1.0 listener: throughput without failures and while every message fails once]"
								+ "(benchmarks/amqp-listener.png)")
				.doesNotContain("has no AMQP 1.0 client support");
		}
		else {
			// RabbitMQ 3.10: nothing measured, and the report says why.
			String reason = "RabbitMQ " + TestBroker.get().version()
					+ " has no AMQP 1.0 client support (4.0 or later has)";
			assertThat(amqpListener.notRun()).isEqualTo(reason);
			assertThat(amqpListener.comparisons()).isEmpty();
			assertThat(report).contains(
					"### 11. AMQP 1.0 listener: throughput without failures and while every message fails once",
					"**Not run: " + reason + ".**");
		}

		BrokerBackendResult brokerBackend = results.brokerBackend();
		if (delayedRetry) {
			assertBrokerBackendRan(brokerBackend, settings, report);
		}
		else {
			// RabbitMQ 3.10 and 4.0: nothing measured, and the report says why.
			String reason = "RabbitMQ " + TestBroker.get().version() + " has no delayed retry (4.3 or later has)";
			assertThat(brokerBackend.notRun()).isEqualTo(reason);
			assertThat(brokerBackend.comparisons()).isEmpty();
			assertThat(brokerBackend.accuracy()).isEmpty();
			assertThat(report).contains("### 8. Broker backend: the tiers against RabbitMQ 4.3's delayed retry",
					"**Not run: " + reason + ".**");
		}
	}

	// What an application declares for its listeners' retries: the tiers, its parking lot
	// and its scheduled queue (delayed sends, on by default); five exchanges; a binding
	// per
	// tier, per work queue, one for the scheduled queue (the tiers return delayed sends
	// to it like retries to a work queue) and three for the parking lots
	// (retry.unroutable to retry.parked, the application's parking lot to it, the shared
	// one to retry.unclaimed).
	private static ObjectCounts retryObjects(int tiers, int listeners) {
		return new ObjectCounts(tiers + 2, 5, tiers + 4 + listeners);
	}

	// RabbitMQ 4.3: every side measured, every retry where its backend keeps it, none
	// early (the AMQP 1.0 client's too); on the broker backend the starter declares
	// what it declares on the tiers.
	private static void assertBrokerBackendRan(BrokerBackendResult brokerBackend, BenchmarkSettings settings,
			String report) {
		assertThat(brokerBackend.notRun()).isNull();
		assertThat(brokerBackend.broker()).startsWith("RabbitMQ 4.");
		assertThat(brokerBackend.storm().sides()).extracting(SideSeries::label)
			.containsExactly(BrokerBackendBenchmark.STORM_NO_FAILURES, BrokerBackendBenchmark.STORM_TIERS,
					BrokerBackendBenchmark.STORM_BROKER);
		assertThat(brokerBackend.storm().ratios()).extracting(RatioSeries::label)
			.containsExactly("broker backend ÷ tiers, storm", "tiers storm ÷ without failures",
					"broker backend storm ÷ without failures");
		assertThat(brokerBackend.forwarding().sides()).extracting(SideSeries::label)
			.containsExactly(BrokerBackendBenchmark.FORWARDING_TIERS, BrokerBackendBenchmark.FORWARDING_BROKER);
		// The third side, on the AMQP 1.0 client, with a delay no queue argument makes;
		// the benchmark checked that the broker held each of its retries.
		assertThat(brokerBackend.accuracy()).extracting(BrokerBackendResult.Lateness::delay)
			.containsExactly("1001ms", "1s", "1s ± 20%");
		assertThat(brokerBackend.accuracy()).extracting(BrokerBackendResult.Lateness::label)
			.containsExactly(BrokerBackendBenchmark.ACCURACY_TIERS + " 1001ms",
					BrokerBackendBenchmark.ACCURACY_BROKER + " 1s", BrokerBackendBenchmark.ACCURACY_AMQP + " 1s ± 20%");
		assertThat(brokerBackend.accuracy()).allSatisfy((side) -> {
			assertThat(side.rounds()).as(side.label()).hasSize(settings.repeats());
			assertThat(side.count()).as(side.label()).isEqualTo(settings.brokerAccuracyMessages() * settings.repeats());
			assertThat(side.earlyCount()).as(side.label()).isZero();
		});
		BrokerBackendResult.Topology topology = brokerBackend.topology();
		int tiers = BenchmarkSettings.TOPOLOGY_TIERS.size();
		int listeners = settings.topologyListeners();
		assertThat(topology.onTiers()).isEqualTo(retryObjects(tiers, listeners));
		assertThat(topology.onBroker()).isEqualTo(topology.onTiers());
		assertThat(topology.listenersOnTheBroker()).isEqualTo(listeners);
		assertThat(topology.verifiedOnBroker()).isTrue();
		assertThat(report).contains("### 8. Broker backend: the tiers against RabbitMQ 4.3's delayed retry",
				"#### 8. Broker backend: failure storm", "| broker backend ÷ tiers, storm |",
				"#### 8. Broker backend: delay accuracy", "| " + BrokerBackendBenchmark.ACCURACY_BROKER + " 1s | 1s | ",
				"| " + BrokerBackendBenchmark.ACCURACY_AMQP + " 1s ± 20% | 1s ± 20% | ",
				"#### 8. Broker backend: broker objects per application")
			.doesNotContain("Not run");
	}

	@Test
	void aSecondReportReplacesTheResultsAndKeepsWhatPeopleWrote() throws IOException {
		Path document = this.output.resolve("benchmarks.md");
		Files.writeString(document, "# Benchmarks\n\nMethod, written by hand.\n\n" + MarkdownReport.START_MARKER
				+ "\nold results\n" + MarkdownReport.END_MARKER + "\n\n## Findings\n\nAlso by hand.\n");
		BenchmarkResults results = new BenchmarkResults(
				io.github.tieredretry.benchmarks.report.MachineInfo.current("RabbitMQ test"), java.util.Map.of(),
				java.time.Instant.now(), java.time.Duration.ofSeconds(1), List.of("end: 0.1, 0.1, 0.1"), null, null,
				null, null, null, null, null, null, null, null, null);

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
