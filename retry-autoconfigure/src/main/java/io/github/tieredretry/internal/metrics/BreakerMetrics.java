package io.github.tieredretry.internal.metrics;

import io.github.tieredretry.listener.ListenerGates;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Gauge {@value #STATE}, tagged {@code listener}: where each listener's circuit breaker
 * stands, 0 closed, 1 open (paused), 2 half-open (trying a few messages), 3 forced open
 * (paused by an operator). Breakers are created with their listener containers, after the
 * registry is bound: each registers its gauge as it comes.
 */
public final class BreakerMetrics implements MeterBinder {

	/** Gauge of a listener's circuit breaker state. */
	public static final String STATE = "rabbitmq.retry.breaker.state";

	private final ListenerGates breakers;

	public BreakerMetrics(ListenerGates breakers) {
		this.breakers = breakers;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		this.breakers.onBreaker(
				(listener, state) -> Gauge.builder(STATE, state, (current) -> current.get().status().gaugeValue())
					.description("Circuit breaker of a retryable listener: 0 closed, 1 open (paused), 2 half-open, "
							+ "3 forced open")
					.tag("listener", listener)
					.strongReference(true)
					.register(registry));
	}

}
