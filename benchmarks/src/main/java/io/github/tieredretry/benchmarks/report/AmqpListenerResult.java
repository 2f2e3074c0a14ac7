package io.github.tieredretry.benchmarks.report;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * {@code @RetryableListener} on the RabbitMQ AMQP 1.0 client against a plain listener of
 * the same client. Run on RabbitMQ 4.0 or later only, the first to speak AMQP 1.0 to that
 * client; on an older broker it says why not.
 *
 * @param broker the broker, e.g. {@code RabbitMQ 4.3.6}
 * @param notRun why the benchmark was not run, or {@code null} when it was
 * @param throughput the sides' throughput without failures and while every message fails
 * once, with their ratios
 */
public record AmqpListenerResult(String broker, @Nullable String notRun, @Nullable Comparison throughput) {

	/**
	 * A benchmark that did not run.
	 * @param broker the broker
	 * @param reason why, e.g. {@code RabbitMQ 3.10.8 has no AMQP 1.0 client support (4.0
	 * or later has)}
	 * @return the result
	 */
	public static AmqpListenerResult notRun(String broker, String reason) {
		return new AmqpListenerResult(broker, reason, null);
	}

	/**
	 * Whether the benchmark ran.
	 * @return whether it did
	 */
	public boolean ran() {
		return this.notRun == null;
	}

	/**
	 * The comparisons, for the ratio table and the charts.
	 * @return the throughput comparison, if run
	 */
	public List<Comparison> comparisons() {
		return (this.throughput != null) ? List.of(this.throughput) : List.of();
	}

}
