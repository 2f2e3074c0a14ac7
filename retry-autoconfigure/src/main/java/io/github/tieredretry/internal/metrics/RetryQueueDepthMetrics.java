package io.github.tieredretry.internal.metrics;

import io.github.tieredretry.internal.topology.RetryTopology;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Gauge {@value #DEPTH}: ready messages in each tier queue and in the parking lot, from
 * the cached {@link RetryQueueDepths} (a scrape never causes more than one broker read
 * per cache period). The value is NaN while a queue is missing or the broker cannot be
 * read.
 */
public final class RetryQueueDepthMetrics implements MeterBinder {

	/**
	 * Gauge of ready messages, tagged {@code queue} and {@code type} ({@code tier} or
	 * {@code parking-lot}).
	 */
	public static final String DEPTH = "rabbitmq.retry.depth";

	private final RetryQueueDepths depths;

	private final String parkingLot;

	public RetryQueueDepthMetrics(RetryQueueDepths depths, RetryTopology topology) {
		this.depths = depths;
		this.parkingLot = topology.parkingLot();
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		for (String queue : this.depths.queues()) {
			Gauge.builder(DEPTH, this.depths, (depths) -> depthOf(depths, queue))
				.description("Messages waiting in a retry tier queue or in the parking lot")
				.baseUnit(BaseUnits.MESSAGES)
				.tag("queue", queue)
				.tag("type", queue.equals(this.parkingLot) ? "parking-lot" : "tier")
				.strongReference(true)
				.register(registry);
		}
	}

	private static double depthOf(RetryQueueDepths depths, String queue) {
		Long depth = depths.current().depthOf(queue);
		return (depth != null) ? depth : Double.NaN;
	}

}
