package io.github.tieredretry.benchmarks;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When the broker-backend benchmark runs, without a broker.
 */
class BrokerBackendBenchmarkTests {

	private static final List<Duration> STORM_DELAYS = List.of(Duration.ofSeconds(1), Duration.ofSeconds(2));

	@Test
	void brokersBefore43AreNotBenchmarkedAndTheReasonNamesTheVersion() {
		assertThat(BrokerBackendBenchmark.whyNotRun("3.10.8", STORM_DELAYS))
			.isEqualTo("RabbitMQ 3.10.8 has no delayed retry (4.3 or later has)");
		assertThat(BrokerBackendBenchmark.whyNotRun("4.0.5", STORM_DELAYS))
			.isEqualTo("RabbitMQ 4.0.5 has no delayed retry (4.3 or later has)");
		assertThat(BrokerBackendBenchmark.whyNotRun("4.2.3", STORM_DELAYS)).contains("has no delayed retry");
		assertThat(BrokerBackendBenchmark.whyNotRun("unknown", STORM_DELAYS)).contains("has no delayed retry");
	}

	@Test
	void brokersFrom43AreBenchmarked() {
		assertThat(BrokerBackendBenchmark.whyNotRun("4.3.6", STORM_DELAYS)).isNull();
		assertThat(BrokerBackendBenchmark.whyNotRun("4.10.0", STORM_DELAYS)).isNull();
		assertThat(BrokerBackendBenchmark.whyNotRun("5.0.0-beta.1", STORM_DELAYS)).isNull();
	}

	@Test
	void stormDelaysThatAQueueCannotMakeAreNotBenchmarked() {
		assertThat(BrokerBackendBenchmark.whyNotRun("4.3.6", List.of(Duration.ofSeconds(1), Duration.ofSeconds(3))))
			.isEqualTo("benchmarks.storm.delays 1s, 3s do not grow linearly (d, 2d), the only delays a queue's "
					+ "delayed retry makes");
		assertThat(BrokerBackendBenchmark.whyNotRun("4.3.6", List.of(Duration.ofMillis(100), Duration.ofMillis(200))))
			.isNull();
	}

}
