package io.github.tieredretry.internal.actuate;

import java.util.LinkedHashMap;
import java.util.Map;

import io.github.tieredretry.internal.forwarding.PublisherBlockedState;
import io.github.tieredretry.internal.install.RetryBackends;
import io.github.tieredretry.internal.metrics.RetryQueueDepths;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.listener.BreakerState;
import io.github.tieredretry.listener.ListenerBackend;
import io.github.tieredretry.listener.ListenerGates;
import io.github.tieredretry.policy.BackendChoice;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Health of the retry queues: {@code DOWN} when a tier queue or the parking lot is
 * missing on the broker (retries would be returned as unroutable, or parked messages
 * would have nowhere to go) or the broker cannot be read; otherwise {@code UP}, with the
 * depths and the forwarding connection's state ({@code publisher.state}: {@code running},
 * or {@code blocked} during a broker resource alarm) in the details. Depths come from the
 * cached {@link RetryQueueDepths}, so frequent health checks do not load the broker.
 */
public class RetryHealthIndicator extends AbstractHealthIndicator {

	private final RetryQueueDepths depths;

	private final RetryTopology topology;

	private final @Nullable PublisherBlockedState publisherState;

	private final ListenerGates breakers;

	private final @Nullable RetryBackends backends;

	/**
	 * Create the indicator.
	 * @param depths the cached queue depths
	 * @param topology the retry topology
	 * @param publisherState whether the broker blocks forwarding, or {@code null} when
	 * unknown
	 * @param breakers the listeners' circuit breakers
	 */
	public RetryHealthIndicator(RetryQueueDepths depths, RetryTopology topology,
			@Nullable PublisherBlockedState publisherState, ListenerGates breakers) {
		this(depths, topology, publisherState, breakers, null);
	}

	/**
	 * Create the indicator.
	 * @param depths cached queue depths
	 * @param topology the retry topology
	 * @param publisherState whether RabbitMQ blocks the forwarding connection, if known
	 * @param breakers the listeners' circuit breakers
	 * @param backends the listeners' backends, or {@code null} when unknown
	 */
	public RetryHealthIndicator(RetryQueueDepths depths, RetryTopology topology,
			@Nullable PublisherBlockedState publisherState, ListenerGates breakers, @Nullable RetryBackends backends) {
		super("Retry queues could not be checked");
		this.depths = depths;
		this.topology = topology;
		this.publisherState = publisherState;
		this.breakers = breakers;
		this.backends = backends;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		addPublisher(builder);
		addBreakers(builder);
		addBackends(builder);
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

	// The forwarding connection's state. A connection the broker blocks (a resource
	// alarm) does not make the application DOWN: healthy messages keep flowing and failed
	// ones wait, unacked, until the alarm clears. The detail says so; the broker's own
	// alarm is what operators must clear.
	private void addPublisher(Health.Builder builder) {
		PublisherBlockedState state = this.publisherState;
		if (state == null) {
			return;
		}
		Map<String, Object> publisher = new LinkedHashMap<>();
		PublisherBlockedState.Blocked blocked = state.current();
		if (blocked != null) {
			publisher.put("state", "blocked");
			publisher.put("reason", blocked.reason());
			publisher.put("since", blocked.since().toString());
			publisher.put("effect", "failed messages wait in their consumers until RabbitMQ's resource alarm clears");
		}
		else {
			publisher.put("state", "running");
		}
		publisher.put("blocks", state.episodes());
		builder.withDetail("publisher", publisher);
	}

	// Listeners paused by their circuit breaker are not DOWN: they pause on purpose while
	// their downstream is down, and nothing is lost meanwhile. The detail names them and
	// says when they try again.
	private void addBreakers(Health.Builder builder) {
		Map<String, Object> breakers = new LinkedHashMap<>();
		for (BreakerState state : this.breakers.breakers()) {
			Map<String, Object> breaker = new LinkedHashMap<>();
			breaker.put("state", state.status().value());
			breaker.put("since", state.since().toString());
			if (state.resumesAt() != null) {
				breaker.put("resumesAt", state.resumesAt().toString());
			}
			breakers.put(state.listener(), breaker);
		}
		if (!breakers.isEmpty()) {
			builder.withDetail("breakers", breakers);
		}
	}

	// Where each listener's retries wait: the tiers, or its own queue (the broker).
	private void addBackends(Health.Builder builder) {
		if (this.backends == null || this.backends.backends().isEmpty()) {
			return;
		}
		Map<String, Object> backends = new LinkedHashMap<>();
		for (ListenerBackend backend : this.backends.backends()) {
			BackendChoice choice = backend.choice();
			backends.put(backend.listener(), (choice != null) ? choice.backend().value() : "not chosen yet");
		}
		builder.withDetail("backends", backends);
	}

}
