package io.github.tieredretry.internal.console;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.github.tieredretry.internal.delayedsend.ScheduledCounts;
import io.github.tieredretry.internal.install.RetryBackends;
import io.github.tieredretry.internal.metrics.RetryQueueDepths;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.listener.BreakerState;
import io.github.tieredretry.listener.ListenerBackend;
import io.github.tieredretry.listener.ListenerGates;
import io.github.tieredretry.listener.RetryableListenerInfo;
import io.github.tieredretry.listener.RetryableListenerRegistry;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.parkinglot.ReplayStatus;
import io.github.tieredretry.policy.BackendChoice;
import io.github.tieredretry.policy.BreakerSettings;
import io.github.tieredretry.policy.EffectiveRetryPolicy;
import org.jspecify.annotations.Nullable;

/**
 * The retry set-up at a glance: the tiers and the parking lot with their depths read from
 * the broker now, every retryable listener with its effective policy, and the replay
 * running in the background. The {@code retry} endpoint and the operations console show
 * the same.
 */
public final class RetryOverview {

	/**
	 * Delays listed per policy; longer policies repeat their last delays or are capped
	 * anyway.
	 */
	static final int MAX_LISTED_DELAYS = 20;

	private final RetryTopology topology;

	private final RetryTrends trends;

	private final RetryableListenerRegistry listeners;

	private final RetryQueueDepths depths;

	private final ParkingLotService parkingLot;

	private final ListenerGates breakers;

	private final @Nullable RetryBackends backends;

	private final @Nullable ScheduledCounts scheduled;

	/**
	 * Create an overview.
	 * @param topology the retry topology
	 * @param listeners the retryable listeners
	 * @param depths reads queue depths from the broker
	 * @param parkingLot the parking lot, for the status of its replay
	 * @param breakers the listeners' circuit breakers
	 */
	public RetryOverview(RetryTopology topology, RetryableListenerRegistry listeners, RetryQueueDepths depths,
			ParkingLotService parkingLot, ListenerGates breakers) {
		this(topology, listeners, depths, parkingLot, breakers, null, new RetryTrends(Clock.systemUTC()));
	}

	/**
	 * Create the overview.
	 * @param topology the retry topology
	 * @param listeners the retryable listeners
	 * @param depths cached queue depths
	 * @param parkingLot the parking lot
	 * @param breakers the listeners' circuit breakers
	 * @param backends the listeners' backends, or {@code null} when unknown
	 * @param trends the counts of the last 24 hours
	 */
	public RetryOverview(RetryTopology topology, RetryableListenerRegistry listeners, RetryQueueDepths depths,
			ParkingLotService parkingLot, ListenerGates breakers, @Nullable RetryBackends backends,
			RetryTrends trends) {
		this(topology, listeners, depths, parkingLot, breakers, backends, trends, null);
	}

	/**
	 * Create the overview.
	 * @param topology the retry topology
	 * @param listeners the retryable listeners
	 * @param depths cached queue depths
	 * @param parkingLot the parking lot
	 * @param breakers the listeners' circuit breakers
	 * @param backends the listeners' backends, or {@code null} when unknown
	 * @param trends the counts of the last 24 hours
	 * @param scheduled the delayed sends waiting per tier, or {@code null} without
	 * delayed sends
	 */
	public RetryOverview(RetryTopology topology, RetryableListenerRegistry listeners, RetryQueueDepths depths,
			ParkingLotService parkingLot, ListenerGates breakers, @Nullable RetryBackends backends, RetryTrends trends,
			@Nullable ScheduledCounts scheduled) {
		this.scheduled = scheduled;
		this.trends = trends;
		this.topology = topology;
		this.listeners = listeners;
		this.depths = depths;
		this.parkingLot = parkingLot;
		this.breakers = breakers;
		this.backends = backends;
	}

	/**
	 * Retried, parked and replayed messages per hour of the last 24 hours, per queue and
	 * its listener.
	 * @return the trends
	 */
	public RetryTrends.Trends trends() {
		return this.trends.snapshot(this::listenerOf);
	}

	/**
	 * The retryable listener that consumes a queue.
	 * @param queue the queue
	 * @return the listener's bean class and method, e.g. {@code OrderListener#onOrder},
	 * or {@code null} when no retryable listener consumes it
	 */
	public @Nullable String listenerOf(String queue) {
		return this.listeners.listeners()
			.stream()
			.filter((info) -> info.queues().contains(queue))
			.map(RetryableListenerInfo::listener)
			.findFirst()
			.orElse(null);
	}

	/**
	 * Describe the set-up, with depths read from the broker now.
	 * @return the description
	 */
	public Description describe() {
		// An operator asking wants the depths as they are now, not as last cached for
		// metrics.
		RetryQueueDepths.Snapshot snapshot = this.depths.refresh();
		List<Tier> tiers = new ArrayList<>();
		Map<Duration, Long> scheduledByTier = (this.scheduled != null) ? this.scheduled.byTier() : Map.of();
		for (Duration tier : this.topology.tiers().tiers()) {
			String queue = RetryTopology.tierQueueName(tier);
			tiers.add(new Tier(TierLadder.nameOf(tier), tier.toMillis(), queue, snapshot.depthOf(queue),
					scheduledByTier.get(tier)));
		}
		String parkingLotQueue = this.topology.parkingLot();
		Map<String, BreakerState> breakers = breakersByListener();
		List<Listener> listeners = this.listeners.listeners()
			.stream()
			.map((info) -> describe(info, breakers.get(info.listener())))
			.toList();
		return new Description(this.topology.queueType().name().toLowerCase(Locale.ROOT), tiers,
				new ParkingLot(parkingLotQueue, snapshot.depthOf(parkingLotQueue)), List.copyOf(snapshot.missing()),
				snapshot.readAt(), snapshot.failure(), listeners, this.parkingLot.replaySettings().rate(),
				this.parkingLot.replayStatus());
	}

	/**
	 * Pause a listener (its breaker forced open, until closed) or resume it (its breaker
	 * closed).
	 * @param listenerOrQueue the listener's name ({@code OrderListener#onOrder}) or a
	 * queue it consumes
	 * @param state {@code open} or {@code closed}
	 * @return the listener's breaker as it is now
	 * @throws NoSuchElementException when no listener with a breaker has that name or
	 * consumes that queue
	 * @throws IllegalArgumentException when the state is neither {@code open} nor
	 * {@code closed}
	 */
	public Breaker changeBreaker(String listenerOrQueue, @Nullable String state) {
		BreakerState breaker = this.breakers.breakers()
			.stream()
			.filter((candidate) -> candidate.listener().equals(listenerOrQueue)
					|| candidate.queues().contains(listenerOrQueue))
			.findFirst()
			.orElseThrow(() -> new NoSuchElementException("No listener with a circuit breaker is named or consumes '"
					+ listenerOrQueue + "'; listeners with one: "
					+ this.breakers.breakers().stream().map(BreakerState::listener).toList()));
		if ("open".equals(state)) {
			this.breakers.open(breaker.listener());
		}
		else if ("closed".equals(state)) {
			this.breakers.close(breaker.listener());
		}
		else {
			throw new IllegalArgumentException("state must be 'open' (pause the listener until closed) or 'closed' "
					+ "(resume it now) but was '" + state + "'");
		}
		return describe(breakersByListener().get(breaker.listener()));
	}

	private Map<String, BreakerState> breakersByListener() {
		Map<String, BreakerState> byListener = new LinkedHashMap<>();
		this.breakers.breakers().forEach((breaker) -> byListener.put(breaker.listener(), breaker));
		return byListener;
	}

	private Listener describe(RetryableListenerInfo info, @Nullable BreakerState breaker) {
		return new Listener(info.listener(), info.listenerId(), info.queues(),
				info.policyName().isEmpty() ? null : info.policyName(), describe(info.policy()),
				(breaker != null) ? describe(breaker) : null, backendOf(info.listener()));
	}

	private @Nullable Backend backendOf(String listener) {
		if (this.backends == null) {
			return null;
		}
		for (ListenerBackend backend : this.backends.backends()) {
			if (backend.listener().equals(listener)) {
				BackendChoice choice = backend.choice();
				return new Backend(backend.requested().value(), (choice != null) ? choice.backend().value() : null,
						(choice != null) ? choice.reason() : "chosen when RabbitMQ can first be reached");
			}
		}
		return null;
	}

	private static Breaker describe(BreakerState state) {
		BreakerSettings settings = state.settings();
		return new Breaker(state.status().value(), state.since(), state.resumesAt(), state.failureRate(),
				settings.failureRateThreshold(), settings.slidingWindowSize(), settings.minimumCalls(),
				TierLadder.nameOf(settings.waitInOpenState()), settings.probesInHalfOpenState());
	}

	private static Policy describe(EffectiveRetryPolicy policy) {
		List<String> delays = new ArrayList<>();
		for (long retry = 1; retry <= Math.min(policy.maxRetries(), MAX_LISTED_DELAYS); retry++) {
			delays.add(TierLadder.nameOf(policy.delayBeforeRetry(retry)));
		}
		Exponential exponential = policy.delays().isEmpty()
				? new Exponential(TierLadder.nameOf(policy.initialInterval()), policy.multiplier(),
						TierLadder.nameOf(policy.maxInterval()))
				: null;
		Duration timeout = policy.timeout();
		return new Policy(policy.maxRetries(), delays, exponential, (policy.jitter() != 0) ? policy.jitter() : null,
				policy.immediateRetries(), (timeout != null) ? TierLadder.nameOf(timeout) : null,
				names(policy.retryOn()), names(policy.noRetryOn()));
	}

	private static List<String> names(List<Class<? extends Throwable>> types) {
		return types.stream().map(Class::getName).toList();
	}

	/**
	 * Description of the retry set-up.
	 *
	 * @param queueType type of the tier queues and the parking lot: {@code classic} or
	 * {@code quorum}
	 * @param tiers the delay tiers, shortest first
	 * @param parkingLot the parking lot
	 * @param missingQueues tier queues or parking lot missing on the broker
	 * @param depthsReadAt when the depths were read
	 * @param depthsFailure why the depths could not be read, or {@code null}
	 * @param listeners the retryable listeners
	 * @param replayRate the most messages a replay moves per second
	 * ({@code retry.replay.rate})
	 * @param replay the replay running in the background, or the last one, or
	 * {@code null}
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	public record Description(String queueType, List<Tier> tiers, ParkingLot parkingLot, List<String> missingQueues,
			Instant depthsReadAt, @Nullable String depthsFailure, List<Listener> listeners, double replayRate,
			@Nullable ReplayStatus replay) {
	}

	/**
	 * Description of a delay tier.
	 *
	 * @param name the tier's name, e.g. {@code 10s}
	 * @param ttlMillis its TTL in milliseconds
	 * @param queue its queue
	 * @param depth messages waiting in it, or {@code null} when the queue is missing or
	 * could not be read
	 * @param scheduled of these, the delayed sends this application instance published,
	 * or {@code null} without delayed sends
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	public record Tier(String name, long ttlMillis, String queue, @Nullable Long depth, @Nullable Long scheduled) {
	}

	/**
	 * Description of the parking lot.
	 *
	 * @param queue its queue
	 * @param depth messages parked, or {@code null} when the queue is missing or could
	 * not be read
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	public record ParkingLot(String queue, @Nullable Long depth) {
	}

	/**
	 * Description of a retryable listener.
	 *
	 * @param listener the bean class and method, e.g. {@code OrderListener#onOrder}
	 * @param listenerId the container's listener id
	 * @param queues the queues it consumes
	 * @param policy the named policy it uses, or {@code null} for {@code retry.defaults}
	 * @param effectivePolicy the policy in force after merging annotation, named policy
	 * and defaults
	 * @param breaker its circuit breaker, or {@code null} when it has none
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	public record Listener(String listener, @Nullable String listenerId, List<String> queues, @Nullable String policy,
			Policy effectivePolicy, @Nullable Breaker breaker, @Nullable Backend backend) {
	}

	/**
	 * Where a listener's retries wait.
	 *
	 * @param requested what its policy asks for: {@code auto}, {@code tiers} or
	 * {@code broker}
	 * @param running what runs: {@code tiers} or {@code broker}, {@code null} until
	 * RabbitMQ was first reached
	 * @param reason why
	 */
	public record Backend(String requested, @Nullable String running, String reason) {
	}

	/**
	 * Description of a listener's circuit breaker.
	 *
	 * @param state {@code closed}, {@code open} (paused), {@code half-open} (trying a few
	 * messages) or {@code forced-open} (paused by an operator)
	 * @param since when it got there
	 * @param resumesAt when an open breaker tries messages again, or {@code null}
	 * @param failureRate the failure rate of the latest messages, in percent, or
	 * {@code null} while too few
	 * @param failureRateThreshold the failure rate that opens it
	 * @param slidingWindowSize how many outcomes the rate is computed over
	 * @param minimumCalls how many outcomes are needed before it may open
	 * @param waitInOpenState how long it stays open before it tries messages again
	 * @param probesInHalfOpenState how many messages it tries
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	public record Breaker(String state, Instant since, @Nullable Instant resumesAt, @Nullable Float failureRate,
			float failureRateThreshold, int slidingWindowSize, int minimumCalls, String waitInOpenState,
			int probesInHalfOpenState) {
	}

	/**
	 * Description of an effective retry policy.
	 *
	 * @param maxRetries retries after the first attempt
	 * @param delays the delay before each retry, the first
	 * {@value RetryOverview#MAX_LISTED_DELAYS} at most
	 * @param exponential the exponential back-off, or {@code null} when the policy has
	 * explicit delays
	 * @param jitter the factor by which each delay is spread out (drawn between
	 * {@code delay × (1 − jitter)} and {@code delay × (1 + jitter)}), or {@code null}
	 * when delays are exact
	 * @param immediateRetries in-place retries before the first tiered one
	 * @param timeout the longest time from first failure to the last retry, or
	 * {@code null}
	 * @param retryOn exceptions that are retried (empty: all)
	 * @param noRetryOn exceptions that are never retried
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	public record Policy(int maxRetries, List<String> delays, @Nullable Exponential exponential,
			@Nullable Double jitter, int immediateRetries, @Nullable String timeout, List<String> retryOn,
			List<String> noRetryOn) {
	}

	/**
	 * Description of an exponential back-off.
	 *
	 * @param initialInterval the delay before the first retry
	 * @param multiplier the factor between consecutive delays
	 * @param maxInterval the longest delay
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	public record Exponential(String initialInterval, double multiplier, String maxInterval) {
	}

}
