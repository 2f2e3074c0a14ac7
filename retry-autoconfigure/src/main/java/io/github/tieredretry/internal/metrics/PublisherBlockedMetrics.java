package io.github.tieredretry.internal.metrics;

import io.github.tieredretry.internal.forwarding.PublisherBlockedState;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Whether RabbitMQ blocks the connection that forwards failed messages (a memory or disk
 * alarm): gauge {@value #BLOCKED} is 1 while it does, counter {@value #BLOCKS} counts how
 * often it did.
 */
public final class PublisherBlockedMetrics implements MeterBinder {

	/** Gauge: 1 while the broker blocks the forwarding connection, else 0. */
	public static final String BLOCKED = "rabbitmq.retry.publisher.blocked";

	/** Counter: how many times the broker blocked the forwarding connection. */
	public static final String BLOCKS = "rabbitmq.retry.publisher.blocks";

	private final PublisherBlockedState state;

	public PublisherBlockedMetrics(PublisherBlockedState state) {
		this.state = state;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		Gauge.builder(BLOCKED, this.state, (state) -> state.isBlocked() ? 1 : 0)
			.description("Whether RabbitMQ blocks the connection that forwards failed messages (resource alarm)")
			.strongReference(true)
			.register(registry);
		FunctionCounter.builder(BLOCKS, this.state, PublisherBlockedState::episodes)
			.description("How many times RabbitMQ blocked the connection that forwards failed messages")
			.register(registry);
	}

}
