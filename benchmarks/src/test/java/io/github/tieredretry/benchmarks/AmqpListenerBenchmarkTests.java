package io.github.tieredretry.benchmarks;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When the AMQP 1.0 listener benchmark runs, without a broker.
 */
class AmqpListenerBenchmarkTests {

	@Test
	void brokersBefore40AreNotBenchmarkedAndTheReasonNamesTheVersion() {
		assertThat(AmqpListenerBenchmark.whyNotRun("3.10.8"))
			.isEqualTo("RabbitMQ 3.10.8 has no AMQP 1.0 client support (4.0 or later has)");
		assertThat(AmqpListenerBenchmark.whyNotRun("3.13.7")).contains("has no AMQP 1.0 client support");
		assertThat(AmqpListenerBenchmark.whyNotRun("unknown")).contains("has no AMQP 1.0 client support");
	}

	@Test
	void brokersFrom40AreBenchmarked() {
		assertThat(AmqpListenerBenchmark.whyNotRun("4.0.5")).isNull();
		assertThat(AmqpListenerBenchmark.whyNotRun("4.3.6")).isNull();
		assertThat(AmqpListenerBenchmark.whyNotRun("5.0.0-beta.1")).isNull();
	}

}
