package io.github.tieredretry.benchmarks;

import io.github.tieredretry.benchmarks.app.Workload;
import io.github.tieredretry.benchmarks.limit.MinimalRetryingConsumer;

/**
 * The limit side of a comparison: a consumer written directly against the RabbitMQ Java
 * client, making the same broker operations per message as the starter.
 *
 * @param label the side's label in the report
 * @param consumer the consumer
 */
record LimitSide(String label, MinimalRetryingConsumer consumer) implements MeasuredSide {

	@Override
	public String queue() {
		return this.consumer.queue();
	}

	@Override
	public Workload workload() {
		return this.consumer.workload();
	}

	@Override
	public void start() {
		this.consumer.start();
	}

	@Override
	public void stop() {
		this.consumer.stop();
	}

}
