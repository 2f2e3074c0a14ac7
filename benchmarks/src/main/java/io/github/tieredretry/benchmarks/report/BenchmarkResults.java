package io.github.tieredretry.benchmarks.report;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * Everything one run of the harness measured.
 *
 * @param machine the machine
 * @param settings the run's settings, for the report (name to value)
 * @param started when the run started
 * @param took how long it took
 * @param loadSamples the load average at the start of each benchmark and at the end
 * @param happyPath benchmark 1, if run
 * @param failureStorm benchmark 2, if run
 * @param forwarding benchmark 3, if run
 * @param delayAccuracy benchmark 4, if run
 * @param topology benchmark 5, if run
 * @param outage benchmark 6, if run
 * @param jitter benchmark 7, if run
 * @param brokerBackend benchmark 8, if selected (run on RabbitMQ 4.3 or later only)
 * @param batchListener benchmark 9, if run
 * @param delayedSend benchmark 10, if run
 * @param amqpListener benchmark 11, if selected (run on RabbitMQ 4.0 or later only)
 */
public record BenchmarkResults(MachineInfo machine, Map<String, String> settings, Instant started, Duration took,
		List<String> loadSamples, @Nullable Comparison happyPath, @Nullable Comparison failureStorm,
		@Nullable Comparison forwarding, @Nullable LatenessResult delayAccuracy, @Nullable TopologyResult topology,
		@Nullable OutageResult outage, @Nullable JitterResult jitter, @Nullable BrokerBackendResult brokerBackend,
		@Nullable Comparison batchListener, @Nullable DelayedSendResult delayedSend,
		@Nullable AmqpListenerResult amqpListener) {

	/**
	 * The comparisons that were run, in benchmark order.
	 * @return the comparisons
	 */
	public List<Comparison> comparisons() {
		List<Comparison> comparisons = new ArrayList<>();
		Comparison jitterPeaks = (this.jitter != null) ? this.jitter.peaks() : null;
		for (Comparison comparison : new Comparison[] { this.happyPath, this.failureStorm, this.forwarding, jitterPeaks,
				this.batchListener }) {
			if (comparison != null) {
				comparisons.add(comparison);
			}
		}
		if (this.brokerBackend != null) {
			comparisons.addAll(this.brokerBackend.comparisons());
		}
		if (this.delayedSend != null) {
			comparisons.add(this.delayedSend.throughput());
		}
		if (this.amqpListener != null) {
			comparisons.addAll(this.amqpListener.comparisons());
		}
		return comparisons;
	}

}
