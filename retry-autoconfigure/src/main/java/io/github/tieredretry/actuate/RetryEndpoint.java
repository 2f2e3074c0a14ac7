package io.github.tieredretry.actuate;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.github.tieredretry.listener.RetryableListenerInfo;
import io.github.tieredretry.listener.RetryableListenerRegistry;
import io.github.tieredretry.metrics.RetryQueueDepths;
import io.github.tieredretry.parkinglot.ParkedMessage;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.parkinglot.PeekResult;
import io.github.tieredretry.parkinglot.ReplayResult;
import io.github.tieredretry.policy.EffectiveRetryPolicy;
import io.github.tieredretry.policy.TierLadder;
import io.github.tieredretry.topology.RetryTopology;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * {@link Endpoint @Endpoint} to see the retry tiers, the parking lot and the retryable listeners, and to
 * work on the parking lot. Over HTTP:
 * <ul>
 * <li>{@code GET /actuator/retry}: tiers, parking lot and listeners with their effective policy;</li>
 * <li>{@code GET /actuator/retry/parking-lot?limit=20&queue=orders}: the oldest parked messages, left
 * parked;</li>
 * <li>{@code POST /actuator/retry/parking-lot/replay} with optional {@code queue} and {@code limit}: moves
 * parked messages back to the queue whose listener failed;</li>
 * <li>{@code DELETE /actuator/retry/parking-lot} with optional {@code queue}: purges parked messages.</li>
 * </ul>
 */
@Endpoint(id = "retry")
public class RetryEndpoint {

	/** The only resource below the endpoint. */
	static final String PARKING_LOT = "parking-lot";

	/** The only action on the parking lot. */
	static final String REPLAY = "replay";

	/** Delays listed per policy; longer policies repeat their last delays or are capped anyway. */
	static final int MAX_LISTED_DELAYS = 20;

	private final RetryTopology topology;

	private final RetryableListenerRegistry listeners;

	private final RetryQueueDepths depths;

	private final ParkingLotService parkingLot;

	/**
	 * Create the endpoint.
	 * @param topology the retry topology
	 * @param listeners the retryable listeners
	 * @param depths reads queue depths from the broker
	 * @param parkingLot works on the parking lot
	 */
	public RetryEndpoint(RetryTopology topology, RetryableListenerRegistry listeners, RetryQueueDepths depths,
			ParkingLotService parkingLot) {
		this.topology = topology;
		this.listeners = listeners;
		this.depths = depths;
		this.parkingLot = parkingLot;
	}

	/**
	 * The tiers, the parking lot with their current depths, and every retryable listener.
	 * @return the description
	 */
	@ReadOperation
	public RetryDescriptor retry() {
		// An operator asking wants the depths as they are now, not as last cached for metrics.
		RetryQueueDepths.Snapshot snapshot = this.depths.refresh();
		List<TierDescriptor> tiers = new ArrayList<>();
		for (Duration tier : this.topology.tiers().tiers()) {
			String queue = RetryTopology.tierQueueName(tier);
			tiers.add(new TierDescriptor(TierLadder.nameOf(tier), tier.toMillis(), queue, snapshot.depthOf(queue)));
		}
		String parkingLotQueue = this.topology.parkingLot();
		List<ListenerDescriptor> listeners = this.listeners.listeners()
			.stream()
			.map(RetryEndpoint::describe)
			.toList();
		return new RetryDescriptor(this.topology.queueType().name().toLowerCase(Locale.ROOT), tiers,
				new ParkingLotDescriptor(parkingLotQueue, snapshot.depthOf(parkingLotQueue)),
				List.copyOf(snapshot.missing()), snapshot.readAt(), snapshot.failure(), listeners);
	}

	/**
	 * The oldest parked messages, without removing them.
	 * @param resource must be {@code parking-lot}
	 * @param limit the most messages to return (default {@value ParkingLotService#DEFAULT_PEEK_LIMIT}, at most
	 * {@value ParkingLotService#MAX_PEEK_LIMIT})
	 * @param queue only messages that failed on this queue
	 * @return the messages, or {@code null} (404) for another resource
	 */
	@ReadOperation
	public @Nullable ParkedMessagesDescriptor parkedMessages(@Selector String resource, @Nullable Integer limit,
			@Nullable String queue) {
		if (!PARKING_LOT.equals(resource)) {
			return null;
		}
		int peekLimit = (limit != null) ? limit : ParkingLotService.DEFAULT_PEEK_LIMIT;
		if (peekLimit < 1 || peekLimit > ParkingLotService.MAX_PEEK_LIMIT) {
			throw new InvalidEndpointRequestException("limit must be between 1 and " + ParkingLotService.MAX_PEEK_LIMIT,
					"Invalid limit " + peekLimit);
		}
		PeekResult peek = this.parkingLot.peek(originFilter(queue), peekLimit);
		return new ParkedMessagesDescriptor(peek.parkingLot(), peek.depth(), peek.scanned(), peek.messages());
	}

	/**
	 * Move parked messages back to their origin queue with their retry state reset.
	 * @param resource must be {@code parking-lot}
	 * @param action must be {@code replay}
	 * @param queue only messages that failed on this queue
	 * @param limit the most messages to replay (default: all)
	 * @return how many moved and how many stayed, and why
	 */
	@WriteOperation
	public ReplayDescriptor replay(@Selector String resource, @Selector String action, @Nullable String queue,
			@Nullable Integer limit) {
		requireParkingLot(resource);
		if (!REPLAY.equals(action)) {
			throw new InvalidEndpointRequestException("Unknown action '" + action + "'; use 'replay'",
					"Unknown action");
		}
		if (limit != null && limit < 1) {
			throw new InvalidEndpointRequestException("limit must be at least 1", "Invalid limit " + limit);
		}
		ReplayResult result = this.parkingLot.replay(originFilter(queue), limit);
		return new ReplayDescriptor(result.moved(), result.stayed(), result.stayedByReason(),
				result.stayedMessages(), result.scanned());
	}

	/**
	 * Remove parked messages for good.
	 * @param resource must be {@code parking-lot}
	 * @param queue only messages that failed on this queue (default: all)
	 * @return how many were removed
	 */
	@DeleteOperation
	public PurgeDescriptor purge(@Selector String resource, @Nullable String queue) {
		requireParkingLot(resource);
		String origin = originFilter(queue);
		return new PurgeDescriptor(this.parkingLot.parkingLot(), origin, this.parkingLot.purge(origin));
	}

	private static void requireParkingLot(String resource) {
		if (!PARKING_LOT.equals(resource)) {
			throw new InvalidEndpointRequestException("Unknown resource '" + resource + "'; use 'parking-lot'",
					"Unknown resource");
		}
	}

	private static @Nullable String originFilter(@Nullable String queue) {
		return (queue != null && !queue.isBlank()) ? queue.trim() : null;
	}

	private static ListenerDescriptor describe(RetryableListenerInfo info) {
		return new ListenerDescriptor(info.listener(), info.listenerId(), info.queues(),
				info.policyName().isEmpty() ? null : info.policyName(), describe(info.policy()));
	}

	private static PolicyDescriptor describe(EffectiveRetryPolicy policy) {
		List<String> delays = new ArrayList<>();
		for (long retry = 1; retry <= Math.min(policy.maxRetries(), MAX_LISTED_DELAYS); retry++) {
			delays.add(TierLadder.nameOf(policy.delayBeforeRetry(retry)));
		}
		ExponentialDescriptor exponential = policy.delays().isEmpty()
				? new ExponentialDescriptor(TierLadder.nameOf(policy.initialInterval()), policy.multiplier(),
						TierLadder.nameOf(policy.maxInterval()))
				: null;
		Duration timeout = policy.timeout();
		return new PolicyDescriptor(policy.maxRetries(), delays, exponential, policy.immediateRetries(),
				(timeout != null) ? TierLadder.nameOf(timeout) : null, names(policy.retryOn()),
				names(policy.noRetryOn()));
	}

	private static List<String> names(List<Class<? extends Throwable>> types) {
		return types.stream().map(Class::getName).toList();
	}

	/**
	 * Description of the retry set-up.
	 *
	 * @param queueType type of the tier queues and the parking lot: {@code classic} or {@code quorum}
	 * @param tiers the delay tiers, shortest first
	 * @param parkingLot the parking lot
	 * @param missingQueues tier queues or parking lot missing on the broker
	 * @param depthsReadAt when the depths were read
	 * @param depthsFailure why the depths could not be read, or {@code null}
	 * @param listeners the retryable listeners
	 */
	public record RetryDescriptor(String queueType, List<TierDescriptor> tiers, ParkingLotDescriptor parkingLot,
			List<String> missingQueues, Instant depthsReadAt, @Nullable String depthsFailure,
			List<ListenerDescriptor> listeners) implements OperationResponseBody {
	}

	/**
	 * Description of a delay tier.
	 *
	 * @param name the tier's name, e.g. {@code 10s}
	 * @param ttlMillis its TTL in milliseconds
	 * @param queue its queue
	 * @param depth messages waiting in it, or {@code null} when the queue is missing or could not be read
	 */
	public record TierDescriptor(String name, long ttlMillis, String queue, @Nullable Long depth) {
	}

	/**
	 * Description of the parking lot.
	 *
	 * @param queue its queue
	 * @param depth messages parked, or {@code null} when the queue is missing or could not be read
	 */
	public record ParkingLotDescriptor(String queue, @Nullable Long depth) {
	}

	/**
	 * Description of a retryable listener.
	 *
	 * @param listener the bean class and method, e.g. {@code OrderListener#onOrder}
	 * @param listenerId the container's listener id
	 * @param queues the queues it consumes
	 * @param policy the named policy it uses, or {@code null} for {@code retry.defaults}
	 * @param effectivePolicy the policy in force after merging annotation, named policy and defaults
	 */
	public record ListenerDescriptor(String listener, @Nullable String listenerId, List<String> queues,
			@Nullable String policy, PolicyDescriptor effectivePolicy) {
	}

	/**
	 * Description of an effective retry policy.
	 *
	 * @param maxRetries retries after the first attempt
	 * @param delays the delay before each retry, the first {@value RetryEndpoint#MAX_LISTED_DELAYS} at most
	 * @param exponential the exponential back-off, or {@code null} when the policy has explicit delays
	 * @param immediateRetries in-place retries before the first tiered one
	 * @param timeout the longest time from first failure to the last retry, or {@code null}
	 * @param retryOn exceptions that are retried (empty: all)
	 * @param noRetryOn exceptions that are never retried
	 */
	public record PolicyDescriptor(int maxRetries, List<String> delays, @Nullable ExponentialDescriptor exponential,
			int immediateRetries, @Nullable String timeout, List<String> retryOn, List<String> noRetryOn) {
	}

	/**
	 * Description of an exponential back-off.
	 *
	 * @param initialInterval the delay before the first retry
	 * @param multiplier the factor between consecutive delays
	 * @param maxInterval the longest delay
	 */
	public record ExponentialDescriptor(String initialInterval, double multiplier, String maxInterval) {
	}

	/**
	 * The oldest parked messages.
	 *
	 * @param parkingLot the parking lot's queue
	 * @param depth parked messages when the peek started
	 * @param scanned messages looked at
	 * @param messages the matching messages, oldest first
	 */
	public record ParkedMessagesDescriptor(String parkingLot, long depth, int scanned, List<ParkedMessage> messages)
			implements OperationResponseBody {
	}

	/**
	 * What a replay did.
	 *
	 * @param moved messages moved back to their origin queue
	 * @param stayed matching messages still parked
	 * @param stayedByReason how many stayed for each reason
	 * @param stayedMessages the first messages that stayed
	 * @param scanned parked messages looked at
	 */
	public record ReplayDescriptor(int moved, int stayed, Map<String, Integer> stayedByReason,
			List<ReplayResult.StayedMessage> stayedMessages, int scanned) implements OperationResponseBody {
	}

	/**
	 * What a purge did.
	 *
	 * @param parkingLot the parking lot's queue
	 * @param queue the origin queue whose messages were purged, or {@code null} for all
	 * @param purged messages removed
	 */
	public record PurgeDescriptor(String parkingLot, @Nullable String queue, long purged)
			implements OperationResponseBody {
	}

}
