package io.github.tieredretry.benchmarks;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;

import io.github.tieredretry.benchmarks.BenchmarkSettings.Benchmark;
import io.github.tieredretry.benchmarks.broker.BrokerOperations;
import io.github.tieredretry.benchmarks.broker.MessagePublisher;
import io.github.tieredretry.benchmarks.report.AmqpListenerResult;
import io.github.tieredretry.benchmarks.report.BenchmarkResults;
import io.github.tieredretry.benchmarks.report.BrokerBackendResult;
import io.github.tieredretry.benchmarks.report.Comparison;
import io.github.tieredretry.benchmarks.report.DelayedSendResult;
import io.github.tieredretry.benchmarks.report.JitterResult;
import io.github.tieredretry.benchmarks.report.LatenessResult;
import io.github.tieredretry.benchmarks.report.MachineInfo;
import io.github.tieredretry.benchmarks.report.OutageResult;
import io.github.tieredretry.benchmarks.report.TopologyResult;

/**
 * One run of the selected benchmarks, one after the other, against one broker. Everything
 * the run creates on the broker has names unique to the run and is removed at its end.
 */
public final class BenchmarkRun {

	private final BenchmarkSettings settings;

	private final Consumer<String> log;

	public BenchmarkRun(BenchmarkSettings settings, Consumer<String> log) {
		this.settings = settings;
		this.log = log;
	}

	/**
	 * Run the benchmarks.
	 * @return what they measured
	 */
	public BenchmarkResults run() {
		Instant started = Instant.now();
		long start = System.nanoTime();
		String runId = "bench-" + UUID.randomUUID().toString().substring(0, 8);
		List<String> loadSamples = new ArrayList<>();
		Comparison happyPath = null;
		Comparison failureStorm = null;
		Comparison forwarding = null;
		LatenessResult delayAccuracy = null;
		TopologyResult topology = null;
		OutageResult outage = null;
		JitterResult jitter = null;
		BrokerBackendResult brokerBackend = null;
		Comparison batchListener = null;
		DelayedSendResult delayedSend = null;
		AmqpListenerResult amqpListener = null;
		String broker;
		try (BrokerOperations operations = new BrokerOperations(this.settings.broker());
				MessagePublisher publisher = new MessagePublisher(this.settings.broker())) {
			broker = operations.serverVersion() + " at " + this.settings.broker().address();
			this.log.accept("Run " + runId + " against " + broker + "; load average " + MachineInfo.loadAverage());
			try (RunContext run = new RunContext(this.settings, runId, operations, publisher, this.log)) {
				if (selected(Benchmark.HAPPY_PATH)) {
					loadSamples.add(load("happy path"));
					happyPath = HappyPathBenchmark.run(run);
				}
				if (selected(Benchmark.FAILURE_STORM)) {
					loadSamples.add(load("failure storm"));
					failureStorm = FailureStormBenchmark.run(run);
				}
				if (selected(Benchmark.FORWARDING)) {
					loadSamples.add(load("forwarding"));
					forwarding = ForwardingRateBenchmark.run(run);
				}
				if (selected(Benchmark.DELAY_ACCURACY)) {
					loadSamples.add(load("delay accuracy"));
					delayAccuracy = DelayAccuracyBenchmark.run(run);
				}
				if (selected(Benchmark.TOPOLOGY)) {
					loadSamples.add(load("topology"));
					topology = TopologyBenchmark.run(run);
				}
				if (selected(Benchmark.OUTAGE)) {
					loadSamples.add(load("outage"));
					outage = OutageBenchmark.run(run);
				}
				if (selected(Benchmark.JITTER)) {
					loadSamples.add(load("jitter"));
					jitter = JitterBenchmark.run(run);
				}
				if (selected(Benchmark.BROKER_BACKEND)) {
					loadSamples.add(load("broker backend"));
					brokerBackend = BrokerBackendBenchmark.run(run);
				}
				if (selected(Benchmark.BATCH_LISTENER)) {
					loadSamples.add(load("batch listener"));
					batchListener = BatchListenerBenchmark.run(run);
				}
				if (selected(Benchmark.DELAYED_SEND)) {
					loadSamples.add(load("delayed sends"));
					delayedSend = DelayedSendBenchmark.run(run);
				}
				if (selected(Benchmark.AMQP_LISTENER)) {
					loadSamples.add(load("AMQP 1.0 listener"));
					amqpListener = AmqpListenerBenchmark.run(run);
				}
				loadSamples.add(load("end"));
			}
			finally {
				cleanUp(operations);
			}
		}
		return new BenchmarkResults(MachineInfo.current(broker), this.settings.describe(), started,
				Duration.ofNanos(System.nanoTime() - start), loadSamples, happyPath, failureStorm, forwarding,
				delayAccuracy, topology, outage, jitter, brokerBackend, batchListener, delayedSend, amqpListener);
	}

	private boolean selected(Benchmark benchmark) {
		return this.settings.benchmarks().contains(benchmark);
	}

	private String load(String when) {
		String load = MachineInfo.loadAverage();
		this.log.accept("Load average before " + when + ": " + load);
		return when + ": " + load;
	}

	private void cleanUp(BrokerOperations operations) {
		try {
			RunContext.purgeForwardingTiers(operations);
		}
		catch (RuntimeException ex) {
			this.log.accept("Could not purge the forwarding tiers: " + ex.getMessage());
		}
		List<String> kept = operations.cleanUp();
		if (!kept.isEmpty()) {
			this.log.accept("Left on the broker: " + kept);
		}
	}

}
