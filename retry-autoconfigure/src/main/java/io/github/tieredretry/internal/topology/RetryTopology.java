package io.github.tieredretry.internal.topology;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.topology.QueueType;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.Binding;
import org.springframework.amqp.core.Declarable;
import org.springframework.amqp.core.DirectExchange;
import org.springframework.amqp.core.Exchange;
import org.springframework.amqp.core.ExchangeBuilder;
import org.springframework.amqp.core.FanoutExchange;
import org.springframework.amqp.core.HeadersExchange;
import org.springframework.amqp.core.Queue;

/**
 * The broker objects behind tiered retries. Whatever the number of listeners, it is the
 * tier queues, the application's parking lot, the shared parking lot and five exchanges:
 * <pre>
 *  failed message ──publish (routing key = work queue, headers retry-tier, retry-parking-lot)──▶ retry.delay (headers)
 *      └─▶ retry.delay.&lt;ttl&gt; (fixed TTL) ──expired, dead-lettered──▶ retry.return (direct)
 *            ├─ binding "orders" ─▶ orders          (only the queue that failed)
 *            └─ no binding (queue gone) ─▶ alternate exchange retry.unroutable (fanout)
 *                 └─▶ retry.parked (headers) ─ retry-parking-lot = its name ─▶ the forwarding application's parking lot
 *                       └─ no match ─▶ alternate exchange retry.unclaimed (fanout) ─▶ retry.parking-lot (shared)
 * </pre> Dead-lettering keeps the message's routing key, which is the name of the queue
 * that failed, so {@code retry.return} delivers it to that queue only: not to other
 * queues bound to the exchange it was first published to. A queue that no longer exists
 * has no binding, and the alternate exchange catches what would otherwise be dropped
 * silently: the message lands in exactly one parking lot, that of the application that
 * forwarded it (its {@code retry-parking-lot} header), or, for a message forwarded by an
 * earlier version (no such header) or whose parking lot is gone, in the shared one.
 */
public final class RetryTopology {

	/**
	 * Headers exchange that routes a forwarded message into the tier named by header
	 * {@code retry-tier}.
	 */
	public static final String DELAY_EXCHANGE = "retry.delay";

	/**
	 * Direct exchange every tier dead-letters to; one binding per retryable work queue,
	 * keyed by its name.
	 */
	public static final String RETURN_EXCHANGE = "retry.return";

	/**
	 * Fanout exchange, alternate exchange of {@link #RETURN_EXCHANGE}, bound to the
	 * parking lot.
	 */
	public static final String UNROUTABLE_EXCHANGE = "retry.unroutable";

	/**
	 * Headers exchange, bound from {@link #UNROUTABLE_EXCHANGE}, that routes an
	 * unroutable retry to the parking lot named by its header {@code retry-parking-lot}.
	 */
	public static final String PARKED_EXCHANGE = "retry.parked";

	/**
	 * Fanout exchange, alternate exchange of {@link #PARKED_EXCHANGE}, bound to
	 * {@link #SHARED_PARKING_LOT}: catches unroutable retries that name no parking lot
	 * bound here.
	 */
	public static final String UNCLAIMED_EXCHANGE = "retry.unclaimed";

	/**
	 * The parking lot of applications without a name, of earlier versions (which all
	 * parked here) and of unroutable retries that name no existing parking lot.
	 */
	public static final String SHARED_PARKING_LOT = "retry.parking-lot";

	/**
	 * Tier queues are named this prefix plus the tier's name, e.g.
	 * {@code retry.delay.10s}.
	 */
	public static final String TIER_QUEUE_PREFIX = "retry.delay.";

	private final TierLadder tiers;

	private final QueueType queueType;

	private final String parkingLot;

	private final List<Declarable> fixedDeclarables;

	private final Map<String, Binding> returnBindings = new ConcurrentHashMap<>();

	public RetryTopology(TierLadder tiers, QueueType queueType, String parkingLot) {
		this.tiers = tiers;
		this.queueType = queueType;
		this.parkingLot = parkingLot;
		this.fixedDeclarables = List.copyOf(createFixedDeclarables());
	}

	/**
	 * The name of the queue of a tier.
	 * @param tier the tier
	 * @return e.g. {@code retry.delay.10s}
	 */
	public static String tierQueueName(Duration tier) {
		return TIER_QUEUE_PREFIX + TierLadder.nameOf(tier);
	}

	private List<Declarable> createFixedDeclarables() {
		List<Declarable> declarables = new ArrayList<>();
		HeadersExchange delay = ExchangeBuilder.headersExchange(DELAY_EXCHANGE).durable(true).build();
		DirectExchange returns = ExchangeBuilder.directExchange(RETURN_EXCHANGE)
			.durable(true)
			.alternate(UNROUTABLE_EXCHANGE)
			.build();
		FanoutExchange unroutable = ExchangeBuilder.fanoutExchange(UNROUTABLE_EXCHANGE).durable(true).build();
		HeadersExchange parked = ExchangeBuilder.headersExchange(PARKED_EXCHANGE)
			.durable(true)
			.alternate(UNCLAIMED_EXCHANGE)
			.build();
		FanoutExchange unclaimed = ExchangeBuilder.fanoutExchange(UNCLAIMED_EXCHANGE).durable(true).build();
		declarables.add(delay);
		declarables.add(returns);
		declarables.add(unroutable);
		declarables.add(parked);
		declarables.add(unclaimed);
		declarables.add(new Queue(this.parkingLot, true, false, false, parkingLotArguments()));
		declarables.add(new Binding(PARKED_EXCHANGE, Binding.DestinationType.EXCHANGE, UNROUTABLE_EXCHANGE, "", null));
		Map<String, Object> ours = new LinkedHashMap<>();
		ours.put("x-match", "all");
		ours.put(RetryHeaders.PARKING_LOT, this.parkingLot);
		declarables.add(new Binding(this.parkingLot, Binding.DestinationType.QUEUE, PARKED_EXCHANGE, "", ours));
		Binding toShared = new Binding(SHARED_PARKING_LOT, Binding.DestinationType.QUEUE, UNCLAIMED_EXCHANGE, "", null);
		// Unless it is this application's, the shared parking lot is declared apart
		// (sharedParkingLot()): should it be missing on a new connection, its binding
		// must not fail the declaration of everything else.
		toShared.setIgnoreDeclarationExceptions(!isShared());
		declarables.add(toShared);
		for (Duration tier : this.tiers.tiers()) {
			String name = tierQueueName(tier);
			declarables.add(new Queue(name, true, false, false, tierArguments(tier)));
			Map<String, Object> match = new LinkedHashMap<>();
			match.put("x-match", "all");
			match.put(RetryHeaders.TIER, TierLadder.nameOf(tier));
			declarables.add(new Binding(name, Binding.DestinationType.QUEUE, DELAY_EXCHANGE, "", match));
		}
		return declarables;
	}

	/**
	 * The arguments of a tier queue: fixed TTL, dead-lettering to
	 * {@link #RETURN_EXCHANGE} without a dead-letter routing key (so the message keeps
	 * the work queue's name as its routing key), and for quorum queues at-least-once
	 * dead-lettering.
	 * @param tier the tier
	 * @return the queue arguments
	 */
	public Map<String, Object> tierArguments(Duration tier) {
		Map<String, Object> arguments = new LinkedHashMap<>();
		long ttl = tier.toMillis();
		// Integer when it fits, like Spring's QueueBuilder, so queues declared by other
		// clients stay equivalent.
		arguments.put("x-message-ttl", (ttl <= Integer.MAX_VALUE) ? (Object) (int) ttl : (Object) ttl);
		arguments.put("x-dead-letter-exchange", RETURN_EXCHANGE);
		if (this.queueType == QueueType.QUORUM) {
			arguments.put("x-queue-type", "quorum");
			arguments.put("x-dead-letter-strategy", "at-least-once");
			arguments.put("x-overflow", "reject-publish");
		}
		return arguments;
	}

	/**
	 * The arguments of the parking-lot queue.
	 * @return the queue arguments
	 */
	public Map<String, Object> parkingLotArguments() {
		Map<String, Object> arguments = new LinkedHashMap<>();
		if (this.queueType == QueueType.QUORUM) {
			arguments.put("x-queue-type", "quorum");
			// Peeking requeues messages, and every requeue counts towards a quorum
			// queue's delivery limit (RabbitMQ 4.0 sets 20 by default, then drops): a
			// parked message must never be dropped. -1 ("no limit") is not understood the
			// same way by every broker version; this is.
			arguments.put("x-delivery-limit", Integer.MAX_VALUE);
		}
		return arguments;
	}

	/**
	 * The bindings earlier versions made, which this topology removes: a parking lot
	 * bound straight to {@link #UNROUTABLE_EXCHANGE} receives a copy of every unroutable
	 * retry of every application on the virtual host.
	 * @return the bindings of this application's and the shared parking lot to
	 * {@code retry.unroutable}
	 */
	public List<Binding> legacyBindings() {
		List<Binding> legacy = new ArrayList<>();
		legacy.add(new Binding(this.parkingLot, Binding.DestinationType.QUEUE, UNROUTABLE_EXCHANGE, "", null));
		if (!isShared()) {
			legacy.add(new Binding(SHARED_PARKING_LOT, Binding.DestinationType.QUEUE, UNROUTABLE_EXCHANGE, "", null));
		}
		return legacy;
	}

	/**
	 * The shared parking lot when it is not this application's: not one of
	 * {@link #queues()}, because it is only created when missing, and any existing one
	 * does, whatever its type (it may have been declared by an application with other
	 * tiers or queue type).
	 * @return the queue to create when missing, or {@code null} when the shared parking
	 * lot is this application's own (then one of {@link #queues()})
	 */
	public @Nullable Queue sharedParkingLot() {
		return isShared() ? null : new Queue(SHARED_PARKING_LOT, true, false, false, parkingLotArguments());
	}

	/**
	 * Whether this application parks in the shared parking lot.
	 * @return whether its parking lot is {@link #SHARED_PARKING_LOT}
	 */
	public boolean isShared() {
		return SHARED_PARKING_LOT.equals(this.parkingLot);
	}

	/**
	 * Register a work queue whose retries must come back to it: adds its binding to
	 * {@link #RETURN_EXCHANGE}. The binding's declaration errors are ignored (logged by
	 * the admin), so a queue that does not exist yet cannot break the declaration of
	 * anything else.
	 * @param queue the work queue's name
	 * @return the binding, new or already registered
	 */
	public Binding registerWorkQueue(String queue) {
		return this.returnBindings.computeIfAbsent(queue, (name) -> {
			Binding binding = new Binding(name, Binding.DestinationType.QUEUE, RETURN_EXCHANGE, name, null);
			binding.setIgnoreDeclarationExceptions(true);
			return binding;
		});
	}

	/**
	 * Every object to declare: exchanges, queues, then bindings (including one per
	 * registered work queue).
	 * @return a new list
	 */
	public List<Declarable> declarables() {
		List<Declarable> all = new ArrayList<>(this.fixedDeclarables);
		all.addAll(this.returnBindings.values());
		return all;
	}

	public Collection<Exchange> exchanges() {
		return this.fixedDeclarables.stream().filter(Exchange.class::isInstance).map(Exchange.class::cast).toList();
	}

	public List<Queue> queues() {
		return this.fixedDeclarables.stream().filter(Queue.class::isInstance).map(Queue.class::cast).toList();
	}

	public List<Binding> bindings() {
		List<Binding> bindings = new ArrayList<>(
				this.fixedDeclarables.stream().filter(Binding.class::isInstance).map(Binding.class::cast).toList());
		bindings.addAll(this.returnBindings.values());
		return bindings;
	}

	/**
	 * The queues registered so far to have retries (and delayed sends) returned to them:
	 * the work queues and the scheduled queue.
	 * @return their names
	 */
	public Set<String> workQueues() {
		return Set.copyOf(this.returnBindings.keySet());
	}

	public List<String> tierQueueNames() {
		return this.tiers.tiers().stream().map(RetryTopology::tierQueueName).toList();
	}

	public TierLadder tiers() {
		return this.tiers;
	}

	public QueueType queueType() {
		return this.queueType;
	}

	public String parkingLot() {
		return this.parkingLot;
	}

}
