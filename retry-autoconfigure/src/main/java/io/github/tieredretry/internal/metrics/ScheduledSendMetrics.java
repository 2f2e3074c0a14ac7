package io.github.tieredretry.internal.metrics;

import java.time.Duration;

import io.github.tieredretry.internal.delayedsend.ScheduledCounts;
import io.github.tieredretry.internal.policy.TierLadder;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Gauge {@value #SCHEDULED}, tagged {@code tier}: the delayed sends waiting in each tier,
 * as {@link ScheduledCounts} counts them.
 */
public final class ScheduledSendMetrics implements MeterBinder {

	/** Gauge of the delayed sends waiting in a tier. */
	public static final String SCHEDULED = "rabbitmq.retry.scheduled";

	private final ScheduledCounts counts;

	public ScheduledSendMetrics(ScheduledCounts counts) {
		this.counts = counts;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		for (Duration tier : this.counts.byTier().keySet()) {
			Gauge.builder(SCHEDULED, this.counts, (counts) -> counts.byTier().getOrDefault(tier, 0L))
				.description("Delayed sends of this application instance waiting in a tier")
				.tag("tier", TierLadder.nameOf(tier))
				.strongReference(true)
				.register(registry);
		}
	}

}
