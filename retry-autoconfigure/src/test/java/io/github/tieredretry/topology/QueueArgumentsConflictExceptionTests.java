package io.github.tieredretry.topology;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.tieredretry.annotation.Backend;
import io.github.tieredretry.policy.BackendChoice;
import io.github.tieredretry.topology.QueueArgumentsConflictException.Conflict;
import io.github.tieredretry.topology.QueueArgumentsConflictException.Consumer;
import io.github.tieredretry.topology.QueueArgumentsConflictException.Difference;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link QueueArgumentsConflictException}: what the failure analysis tells an
 * operator whose work queue exists with other arguments than a start declares. The
 * broker's messages are RabbitMQ 4.3.6's, as measured.
 */
class QueueArgumentsConflictExceptionTests {

	static final Map<String, Object> QUORUM = Map.of("x-queue-type", "quorum");

	static final Map<String, Object> DELAYED_RETRY = delayedRetry();

	static final Consumer ON_THE_TIERS = new Consumer("OrderListener#onOrder", List.of("orders"), Backend.TIERS,
			new BackendChoice(Backend.TIERS, "the backend asked for is tiers", null, null));

	static final Consumer ON_THE_BROKER = new Consumer("OrderListener#onOrder", List.of("orders"), Backend.AUTO,
			new BackendChoice(Backend.BROKER, "RabbitMQ 4.3.6 holds each retry in its queue", null, null));

	@Test
	void queueDeclaredForTheBrokerAndStartedOnTheTiersNamesTheArgumentTheBackendAndTheCommands() {
		QueueArgumentsConflictException conflict = delayedRetryTypeConflict(QUORUM,
				"received none but current is the value 'failed' of type 'longstr'", ON_THE_TIERS);

		assertThat(conflict.getConflicts()).singleElement()
			.extracting(Conflict::difference)
			.isEqualTo(new Difference("x-delayed-retry-type", "failed", null));
		assertThat(conflict.getProblem())
			.startsWith("Queue 'orders' on virtual host '/' exists with other arguments "
					+ "than this application declares, and RabbitMQ never changes the arguments of an existing queue:")
			.contains("queue 'orders', argument 'x-delayed-retry-type': the queue has 'failed'; this application "
					+ "declares none")
			.contains("OrderListener#onOrder (backend tiers asked for) would run its retries on the tiers: "
					+ "the backend asked for is tiers.")
			.contains("So this application declares the queue with {x-queue-type=quorum}.")
			.contains("This application declared nothing");
		assertThat(conflict.getFix()).contains("Either keep the queue as it is")
			.contains("retry.broker.declare-queue-arguments=true")
			.contains("docs/migration.md, \"broker → tiers\"")
			.contains("rabbitmqctl list_queues -p / name messages")
			.contains("rabbitmqctl delete_queue -p / orders" + System.lineSeparator())
			.doesNotContain("--if-empty")
			.contains("A policy cannot resolve this");
		assertThat(conflict.getMessage()).isEqualTo(conflict.getProblem() + " " + conflict.getFix());
	}

	@Test
	void argumentsAddedToAQueueThatExistsWithoutThemAreShownSortedWithTheWayBack() {
		QueueArgumentsConflictException conflict = delayedRetryTypeConflict(DELAYED_RETRY,
				"received the value 'failed' of type 'longstr' but current is none", ON_THE_BROKER);

		assertThat(conflict.getProblem())
			.contains("argument 'x-delayed-retry-type': the queue has none; this application declares 'failed'")
			.contains("(backend auto asked for) would run its retries on the broker: RabbitMQ 4.3.6 holds each retry")
			.contains("{x-delayed-retry-max=3000, x-delayed-retry-min=1000, x-delayed-retry-type=failed, "
					+ "x-queue-type=quorum}");
		assertThat(conflict.getFix()).contains("retry.broker.declare-queue-arguments=false")
			.contains("docs/migration.md, \"tiers → broker\"");
	}

	@Test
	void valuesAreReadInEveryFormTheBrokerWritesThem() {
		assertThat(difference("received '500' but current is '1000'"))
			.isEqualTo(new Difference("x-delayed-retry-min", "1000", "500"));
		assertThat(difference("received none but current is the value '3000' of type 'signedint'"))
			.isEqualTo(new Difference("x-delayed-retry-min", "3000", null));
		assertThat(difference("received the value '8' of type 'signedint' but current is none"))
			.isEqualTo(new Difference("x-delayed-retry-min", null, "8"));
		Conflict unreadable = Conflict.fromBrokerMessage("orders", QUORUM, "PRECONDITION_FAILED - something else",
				List.of(ON_THE_TIERS));
		assertThat(unreadable.difference()).isNull();
		assertThat(new QueueArgumentsConflictException(List.of(unreadable), "/").getProblem())
			.contains("queue 'orders': PRECONDITION_FAILED - something else");
	}

	@Test
	void classicQueueIsDeletedOnlyIfEmptyAndEveryCommandQuotesTheVirtualHost() {
		Map<String, Object> classic = Map.of("x-queue-type", "classic", "x-max-length", 10);
		QueueArgumentsConflictException conflict = new QueueArgumentsConflictException(List.of(
				Conflict.fromBrokerMessage("orders", classic,
						"PRECONDITION_FAILED - inequivalent arg 'x-max-length' for queue 'orders' in vhost 'shop "
								+ "floor': received '10' but current is none",
						List.of(ON_THE_TIERS)),
				Conflict.fromBrokerMessage("audit log", QUORUM,
						"PRECONDITION_FAILED - inequivalent arg 'x-delivery-limit' for queue 'audit log' in vhost "
								+ "'shop floor': received none but current is '30'",
						List.of(ON_THE_TIERS))),
				"shop floor");

		assertThat(conflict.getProblem())
			.startsWith("2 queues on virtual host 'shop floor' exist with other arguments");
		assertThat(conflict.getFix()).contains("rabbitmqctl delete_queue -p 'shop floor' --if-empty orders")
			.contains("rabbitmqctl delete_queue -p 'shop floor' 'audit log'" + System.lineSeparator())
			.contains("rabbitmqctl list_queues -p 'shop floor' name messages")
			.contains("docs/migration.md, \"broker → tiers\" and \"tiers → broker\"");
	}

	private static Difference difference(String values) {
		return onOrders(QUORUM, "x-delayed-retry-min", values, ON_THE_TIERS).difference();
	}

	/**
	 * The refusal of queue 'orders' on virtual host '/' over its argument
	 * {@code x-delayed-retry-type}, with the given values.
	 */
	private static QueueArgumentsConflictException delayedRetryTypeConflict(Map<String, Object> declared, String values,
			Consumer consumer) {
		return new QueueArgumentsConflictException(
				List.of(onOrders(declared, "x-delayed-retry-type", values, consumer)), "/");
	}

	/**
	 * The conflict over one argument of queue 'orders' on virtual host '/', read from the
	 * broker's refusal with the given values.
	 */
	private static Conflict onOrders(Map<String, Object> declared, String argument, String values, Consumer consumer) {
		return Conflict.fromBrokerMessage("orders", declared,
				"PRECONDITION_FAILED - inequivalent arg '" + argument + "' for queue 'orders' in vhost '/': " + values,
				List.of(consumer));
	}

	private static Map<String, Object> delayedRetry() {
		Map<String, Object> arguments = new LinkedHashMap<>(QUORUM);
		arguments.put("x-delayed-retry-type", "failed");
		arguments.put("x-delayed-retry-min", 1000);
		arguments.put("x-delayed-retry-max", 3000);
		return arguments;
	}

}
