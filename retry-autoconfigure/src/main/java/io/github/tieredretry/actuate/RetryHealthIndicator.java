package io.github.tieredretry.actuate;

import java.util.LinkedHashMap;
import java.util.Map;

import io.github.tieredretry.metrics.RetryQueueDepths;
import io.github.tieredretry.topology.RetryTopology;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Health of the retry queues: {@code DOWN} when a tier queue or the parking lot is missing on the broker
 * (retries would be returned as unroutable, or parked messages would have nowhere to go) or the broker
 * cannot be read; otherwise {@code UP}, with the depths in the details. Depths come from the cached
 * {@link RetryQueueDepths}, so frequent health checks do not load the broker.
 */
public class RetryHealthIndicator extends AbstractHealthIndicator {

	private final RetryQueueDepths depths;

	private final RetryTopology topology;

	public RetryHealthIndicator(RetryQueueDepths depths, RetryTopology topology) {
		super("Retry queues could not be checked");
		this.depths = depths;
		this.topology = topology;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		RetryQueueDepths.Snapshot snapshot = this.depths.current();
		if (!snapshot.isRead()) {
			builder.down().withDetail("error", String.valueOf(snapshot.failure()));
			return;
		}
		Map<String, Long> tiers = new LinkedHashMap<>();
		for (String queue : this.topology.tierQueueNames()) {
			Long depth = snapshot.depthOf(queue);
			if (depth != null) {
				tiers.put(queue, depth);
			}
		}
		Map<String, Object> parkingLot = new LinkedHashMap<>();
		parkingLot.put("queue", this.topology.parkingLot());
		Long parked = snapshot.depthOf(this.topology.parkingLot());
		if (parked != null) {
			parkingLot.put("depth", parked);
		}
		builder.withDetail("tiers", tiers).withDetail("parkingLot", parkingLot);
		if (snapshot.missing().isEmpty()) {
			builder.up();
		}
		else {
			builder.down().withDetail("missingQueues", snapshot.missing());
		}
	}

}
