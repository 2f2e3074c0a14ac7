package io.github.tieredretry.internal.topology;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.topology.QueueType;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.core.Binding;
import org.springframework.amqp.core.Declarable;
import org.springframework.amqp.core.Exchange;
import org.springframework.amqp.core.ExchangeTypes;
import org.springframework.amqp.core.Queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Tests for {@link RetryTopology}: the broker objects it declares, for classic and quorum
 * queues.
 */
class RetryTopologyTests {

	private static final TierLadder TIERS = TierLadder
		.of(List.of(Duration.ofSeconds(1), Duration.ofSeconds(10), Duration.ofMinutes(2)));

	@Test
	void fiveDurableExchangesRouteToTheTiersBackToTheWorkQueueOrToAParkingLot() {
		RetryTopology topology = new RetryTopology(TIERS, QueueType.CLASSIC, "retry.parking-lot.orders");

		assertThat(topology.exchanges()).extracting(Exchange::getName, Exchange::getType, Exchange::isDurable)
			.containsExactly(tuple("retry.delay", ExchangeTypes.HEADERS, true),
					tuple("retry.return", ExchangeTypes.DIRECT, true),
					tuple("retry.unroutable", ExchangeTypes.FANOUT, true),
					tuple("retry.parked", ExchangeTypes.HEADERS, true),
					tuple("retry.unclaimed", ExchangeTypes.FANOUT, true));
		assertThat(exchange(topology, RetryTopology.RETURN_EXCHANGE).getArguments())
			.containsOnly(entry("alternate-exchange", RetryTopology.UNROUTABLE_EXCHANGE));
		assertThat(exchange(topology, RetryTopology.PARKED_EXCHANGE).getArguments())
			.containsOnly(entry("alternate-exchange", RetryTopology.UNCLAIMED_EXCHANGE));
	}

	@Test
	void anUnroutableRetryGoesToTheParkingLotItsHeaderNamesOrElseToTheSharedOne() {
		RetryTopology topology = new RetryTopology(TIERS, QueueType.CLASSIC, "retry.parking-lot.orders");

		assertThat(topology.bindings())
			.extracting(Binding::getExchange, Binding::getDestination, Binding::getDestinationType,
					Binding::getArguments)
			.startsWith(tuple("retry.unroutable", "retry.parked", Binding.DestinationType.EXCHANGE, Map.of()),
					tuple("retry.parked", "retry.parking-lot.orders", Binding.DestinationType.QUEUE,
							Map.of("x-match", "all", "retry-parking-lot", "retry.parking-lot.orders")),
					tuple("retry.unclaimed", "retry.parking-lot", Binding.DestinationType.QUEUE, Map.of()));
		// The shared parking lot is not this application's: declared apart, whatever its
		// type, and its binding never breaks a declaration.
		assertThat(topology.isShared()).isFalse();
		assertThat(topology.queues()).extracting(Queue::getName).doesNotContain("retry.parking-lot");
		assertThat(topology.sharedParkingLot()).isNotNull()
			.satisfies((shared) -> assertThat(shared.getName()).isEqualTo("retry.parking-lot"));
		assertThat(topology.bindings().get(2).isIgnoreDeclarationExceptions()).isTrue();
	}

	@Test
	void anApplicationWithoutAParkingLotOfItsOwnParksInTheSharedOneAndDeclaresItStrictly() {
		RetryTopology topology = new RetryTopology(TIERS, QueueType.QUORUM, "retry.parking-lot");

		assertThat(topology.isShared()).isTrue();
		assertThat(topology.sharedParkingLot()).isNull();
		assertThat(topology.queues()).extracting(Queue::getName).containsOnlyOnce("retry.parking-lot");
		assertThat(topology.bindings()).filteredOn((binding) -> binding.getExchange().equals("retry.unclaimed"))
			.singleElement()
			.satisfies((binding) -> assertThat(binding.isIgnoreDeclarationExceptions()).isFalse());
		assertThat(topology.legacyBindings()).extracting(Binding::getExchange, Binding::getDestination)
			.containsExactly(tuple("retry.unroutable", "retry.parking-lot"));
	}

	@Test
	void theBindingsOfEarlierVersionsThatCopiedEveryUnroutableRetryIntoAParkingLotAreRemoved() {
		RetryTopology topology = new RetryTopology(TIERS, QueueType.CLASSIC, "retry.parking-lot.orders");

		assertThat(topology.legacyBindings()).extracting(Binding::getExchange, Binding::getDestination)
			.containsExactly(tuple("retry.unroutable", "retry.parking-lot.orders"),
					tuple("retry.unroutable", "retry.parking-lot"));
		assertThat(topology.bindings()).noneMatch((binding) -> binding.getExchange().equals("retry.unroutable")
				&& binding.getDestinationType() == Binding.DestinationType.QUEUE);
	}

	@Test
	void everyTierHasADurableQueueNamedAfterItWithItsTtlThatDeadLettersToTheReturnExchangeKeepingTheRoutingKey() {
		RetryTopology topology = new RetryTopology(TIERS, QueueType.CLASSIC, "retry.parking-lot");

		assertThat(topology.tierQueueNames()).containsExactly("retry.delay.1s", "retry.delay.10s", "retry.delay.2m");
		Queue tenSeconds = queue(topology, "retry.delay.10s");
		assertThat(tenSeconds.isDurable()).isTrue();
		assertThat(tenSeconds.isExclusive()).isFalse();
		assertThat(tenSeconds.isAutoDelete()).isFalse();
		assertThat(tenSeconds.getArguments()).containsOnly(entry("x-message-ttl", 10_000),
				entry("x-dead-letter-exchange", "retry.return"));
	}

	@Test
	void quorumTiersDeadLetterAtLeastOnceWithoutADeadLetterRoutingKey() {
		RetryTopology topology = new RetryTopology(TIERS, QueueType.QUORUM, "retry.parking-lot");

		assertThat(queue(topology, "retry.delay.2m").getArguments()).containsOnly(entry("x-message-ttl", 120_000),
				entry("x-dead-letter-exchange", "retry.return"), entry("x-queue-type", "quorum"),
				entry("x-dead-letter-strategy", "at-least-once"), entry("x-overflow", "reject-publish"));
	}

	@Test
	void ttlTooLargeForAnIntegerIsALong() {
		Duration fortyDays = Duration.ofDays(40);
		RetryTopology topology = new RetryTopology(TierLadder.of(List.of(fortyDays)), QueueType.CLASSIC, "parked");

		assertThat(topology.tierArguments(fortyDays)).containsEntry("x-message-ttl", fortyDays.toMillis());
		assertThat(topology.tierArguments(fortyDays).get("x-message-ttl")).isInstanceOf(Long.class);
		assertThat(topology.tierArguments(Duration.ofSeconds(1)).get("x-message-ttl")).isInstanceOf(Integer.class);
	}

	@Test
	void classicParkingLotHasNoArgumentsAndAQuorumOneNeverDropsAMessage() {
		RetryTopology classic = new RetryTopology(TIERS, QueueType.CLASSIC, "retry.parking-lot");
		RetryTopology quorum = new RetryTopology(TIERS, QueueType.QUORUM, "retry.parking-lot");

		assertThat(queue(classic, "retry.parking-lot").getArguments()).isEmpty();
		assertThat(queue(classic, "retry.parking-lot").isDurable()).isTrue();
		assertThat(queue(quorum, "retry.parking-lot").getArguments()).containsOnly(entry("x-queue-type", "quorum"),
				entry("x-delivery-limit", Integer.MAX_VALUE));
		assertThat(quorum.parkingLot()).isEqualTo("retry.parking-lot");
	}

	@Test
	void eachTierIsBoundToTheDelayExchangeByItsTierHeader() {
		RetryTopology topology = new RetryTopology(TIERS, QueueType.CLASSIC, "retry.parking-lot");

		assertThat(topology.bindings()).filteredOn((binding) -> binding.getExchange().equals("retry.delay"))
			.extracting(Binding::getDestination, Binding::getRoutingKey, Binding::getArguments)
			.containsExactly(tuple("retry.delay.1s", "", Map.of("x-match", "all", "retry-tier", "1s")),
					tuple("retry.delay.10s", "", Map.of("x-match", "all", "retry-tier", "10s")),
					tuple("retry.delay.2m", "", Map.of("x-match", "all", "retry-tier", "2m")));
	}

	@Test
	void workQueueIsBoundToTheReturnExchangeByItsNameOnceAndItsBindingNeverBreaksADeclaration() {
		RetryTopology topology = new RetryTopology(TIERS, QueueType.CLASSIC, "retry.parking-lot");

		Binding orders = topology.registerWorkQueue("orders");
		Binding again = topology.registerWorkQueue("orders");
		topology.registerWorkQueue("payments");

		assertThat(again).isSameAs(orders);
		assertThat(orders.getExchange()).isEqualTo("retry.return");
		assertThat(orders.getDestination()).isEqualTo("orders");
		assertThat(orders.getRoutingKey()).isEqualTo("orders");
		assertThat(orders.isDestinationQueue()).isTrue();
		assertThat(orders.isIgnoreDeclarationExceptions()).isTrue();
		assertThat(topology.workQueues()).containsExactlyInAnyOrder("orders", "payments");
		assertThat(topology.bindings()).contains(orders);
	}

	@Test
	void declarablesListExchangesThenQueuesThenBindingsIncludingWorkQueuesRegisteredLater() {
		RetryTopology topology = new RetryTopology(TIERS, QueueType.CLASSIC, "retry.parking-lot");
		List<Declarable> before = topology.declarables();

		Binding orders = topology.registerWorkQueue("orders");

		assertThat(before).hasSize(5 + 4 + 6).doesNotContain(orders);
		List<Declarable> after = topology.declarables();
		assertThat(after).hasSize(before.size() + 1).endsWith(orders);
		assertThat(after.subList(0, 5)).allMatch(Exchange.class::isInstance);
		assertThat(topology.queues()).extracting(Queue::getName)
			.containsExactly("retry.parking-lot", "retry.delay.1s", "retry.delay.10s", "retry.delay.2m");
	}

	private static Exchange exchange(RetryTopology topology, String name) {
		return topology.exchanges()
			.stream()
			.filter((exchange) -> exchange.getName().equals(name))
			.findFirst()
			.orElseThrow();
	}

	@Test
	void tierQueueNameUsesTheShortNameOfTheTier() {
		assertThat(RetryTopology.tierQueueName(Duration.ofMillis(1500))).isEqualTo("retry.delay.1500ms");
		assertThat(RetryTopology.tierQueueName(Duration.ofHours(1))).isEqualTo("retry.delay.1h");
		assertThat(RetryTopology.tierQueueName(Duration.ofDays(2))).isEqualTo("retry.delay.2d");
	}

	private static Queue queue(RetryTopology topology, String name) {
		return topology.queues()
			.stream()
			.filter((queue) -> queue.getName().equals(name))
			.findFirst()
			.orElseThrow(() -> new AssertionError("no queue " + name + " in " + topology.queues()));
	}

}
