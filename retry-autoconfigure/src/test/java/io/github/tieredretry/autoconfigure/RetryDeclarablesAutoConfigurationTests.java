package io.github.tieredretry.autoconfigure;

import java.util.List;

import io.github.tieredretry.internal.topology.RetryDeclarables;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.internal.topology.RetryTopologyDeclarer;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.core.Binding;
import org.springframework.amqp.core.Exchange;
import org.springframework.amqp.core.ExchangeTypes;
import org.springframework.amqp.core.Queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Tests for the retry topology the auto-configuration declares: exchanges, tiers, parking
 * lot and bindings.
 */
class RetryDeclarablesAutoConfigurationTests extends AutoConfigurationTestSupport {

	@Test
	void declarablesAreFiveExchangesTheTierQueuesAndTheParkingLot() {
		this.contextRunner.withPropertyValues("retry.tiers=1500ms,10s,2m", "retry.queue-type=classic")
			.run((context) -> {
				RetryDeclarables declarables = checked(context);
				assertThat(declared(declarables, Exchange.class))
					.extracting(Exchange::getName, Exchange::getType, Exchange::isDurable)
					.containsExactlyInAnyOrder(tuple("retry.delay", ExchangeTypes.HEADERS, true),
							tuple("retry.return", ExchangeTypes.DIRECT, true),
							tuple("retry.unroutable", ExchangeTypes.FANOUT, true),
							tuple("retry.parked", ExchangeTypes.HEADERS, true),
							tuple("retry.unclaimed", ExchangeTypes.FANOUT, true));
				Exchange returns = declared(declarables, Exchange.class).stream()
					.filter((exchange) -> exchange.getName().equals("retry.return"))
					.findFirst()
					.orElseThrow();
				assertThat(returns.getArguments()).containsEntry("alternate-exchange", "retry.unroutable");
				assertThat(queueNames(declarables)).containsExactly("retry.parking-lot", "retry.delay.1500ms",
						"retry.delay.10s", "retry.delay.2m");
				assertThat(declared(declarables, Queue.class)).allSatisfy((queue) -> {
					assertThat(queue.isDurable()).isTrue();
					assertThat(queue.isExclusive()).isFalse();
					assertThat(queue.isAutoDelete()).isFalse();
				});
				assertThat(queue(declarables, "retry.delay.1500ms").getArguments())
					.containsOnly(entry("x-message-ttl", 1500), entry("x-dead-letter-exchange", "retry.return"));
				assertThat(queue(declarables, "retry.delay.2m").getArguments()).containsEntry("x-message-ttl", 120_000);
				assertThat(queue(declarables, "retry.parking-lot").getArguments()).isEmpty();
			});
	}

	@Test
	void nothingIsDeclaredOnNewConnectionsBeforeTheTopologyHasBeenCheckedAgainstTheBroker() {
		// The broker is unreachable here: the startup check could not run.
		this.contextRunner.withUserConfiguration(OrderListener.class).run((context) -> {
			assertThat(context.getBean(RetryTopologyDeclarer.class).isChecked()).isFalse();
			assertThat(context.getBean(RetryDeclarables.class).getDeclarables()).isEmpty();
			assertThat(context.getBean(RetryDeclarables.class).getDeclarablesByType(Queue.class)).isEmpty();
			assertThat(checked(context).getDeclarables())
				.hasSize(context.getBean(RetryTopology.class).declarables().size());
		});
	}

	@Test
	void eachTierQueueIsBoundToTheDelayExchangeByItsTierHeader() {
		this.contextRunner.withPropertyValues("retry.tiers=1s,90s").run((context) -> {
			List<Binding> bindings = declared(checked(context), Binding.class);
			assertThat(bindings).filteredOn((binding) -> binding.getExchange().equals("retry.delay"))
				.extracting(Binding::getDestination, (binding) -> binding.getArguments().get("retry-tier"),
						(binding) -> binding.getArguments().get("x-match"))
				.containsExactlyInAnyOrder(tuple("retry.delay.1s", "1s", "all"),
						tuple("retry.delay.90s", "90s", "all"));
			assertThat(bindings).filteredOn((binding) -> binding.getExchange().equals("retry.parked"))
				.extracting(Binding::getDestination)
				.containsExactly("retry.parking-lot");
		});
	}

	@Test
	void theParkingLotIsNamedAfterTheApplicationUnlessSet() {
		this.contextRunner.withPropertyValues("spring.application.name=billing").run((context) -> {
			RetryTopology topology = context.getBean(RetryTopology.class);
			assertThat(topology.parkingLot()).isEqualTo("retry.parking-lot.billing");
			assertThat(queueNames(checked(context))).contains("retry.parking-lot.billing")
				.doesNotContain("retry.parking-lot");
			assertThat(declared(checked(context), Binding.class))
				.filteredOn((binding) -> binding.getExchange().equals("retry.parked"))
				.singleElement()
				.satisfies((binding) -> assertThat(binding.getArguments()).containsEntry("retry-parking-lot",
						"retry.parking-lot.billing"));
		});
		this.contextRunner.withPropertyValues("spring.application.name=billing", "retry.parking-lot=billing.parked")
			.run((context) -> assertThat(context.getBean(RetryTopology.class).parkingLot())
				.isEqualTo("billing.parked"));
		this.contextRunner.run((context) -> assertThat(context.getBean(RetryTopology.class).isShared()).isTrue());
	}

	@Test
	void quorumTiersByDefaultDeadLetterAtLeastOnce() {
		this.contextRunner.withPropertyValues("retry.parking-lot=orders.parked").run((context) -> {
			RetryDeclarables declarables = checked(context);
			assertThat(queueNames(declarables)).hasSize(7).contains("orders.parked");
			assertThat(declared(declarables, Queue.class))
				.filteredOn((queue) -> queue.getName().startsWith("retry.delay."))
				.hasSize(6)
				.allSatisfy((queue) -> assertThat(queue.getArguments()).contains(entry("x-queue-type", "quorum"),
						entry("x-dead-letter-strategy", "at-least-once"), entry("x-overflow", "reject-publish"),
						entry("x-dead-letter-exchange", "retry.return")));
			assertThat(queue(declarables, "orders.parked").getArguments()).containsOnly(entry("x-queue-type", "quorum"),
					entry("x-delivery-limit", Integer.MAX_VALUE));
		});
	}

	@Test
	void declarablesByTypeAreTheDeclarablesOfThatType() {
		this.contextRunner.withUserConfiguration(OrderListener.class).run((context) -> {
			RetryDeclarables declarables = checked(context);
			assertThat(declarables.getDeclarablesByType(Exchange.class))
				.containsExactlyElementsOf(declared(declarables, Exchange.class));
			assertThat(declarables.getDeclarablesByType(Queue.class))
				.containsExactlyElementsOf(declared(declarables, Queue.class));
			assertThat(declarables.getDeclarablesByType(Binding.class)).hasSize(10)
				.containsExactlyElementsOf(declared(declarables, Binding.class));
		});
	}

	@Test
	void workQueuesOfRetryableListenersAreBoundToTheReturnExchangeWithoutNewExchanges() {
		this.contextRunner.withUserConfiguration(OrderListener.class, InvoiceListener.class, PlainListener.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				RetryDeclarables declarables = checked(context);
				assertThat(declared(declarables, Exchange.class)).hasSize(5);
				assertThat(declared(declarables, Binding.class))
					.filteredOn((binding) -> binding.getExchange().equals("retry.return"))
					.extracting(Binding::getDestination, Binding::getRoutingKey)
					.containsExactlyInAnyOrder(tuple("orders", "orders"), tuple("invoices", "invoices"));
			});
	}

}
