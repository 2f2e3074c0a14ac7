package io.github.tieredretry.topology;

import java.util.List;

import io.github.tieredretry.topology.RetryTopologyConflictException.Conflict;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RetryTopologyConflictException}: what the failure analysis tells an
 * operator.
 */
class RetryTopologyConflictExceptionTests {

	private static final String BROKER_MESSAGE = "PRECONDITION_FAILED - inequivalent arg 'x-overflow' for queue "
			+ "'retry.delay.1s' in vhost 'orders': received the value 'reject-publish' of type 'longstr' but current "
			+ "is none";

	@Test
	void commandsNameTheVirtualHostAndQuoteWhatTheShellWouldSplit() {
		RetryTopologyConflictException conflict = new RetryTopologyConflictException(
				List.of(new Conflict("queue", "retry.delay.1s", QueueType.CLASSIC, BROKER_MESSAGE),
						new Conflict("queue", "my parking lot", QueueType.CLASSIC, BROKER_MESSAGE)),
				QueueType.QUORUM, "shop floor", true);
		assertThat(conflict.getFix()).contains("rabbitmqctl delete_queue -p 'shop floor' --if-empty retry.delay.1s")
			.contains("rabbitmqctl delete_queue -p 'shop floor' --if-empty 'my parking lot'")
			.contains("shared by every application on virtual host 'shop floor'")
			.contains("set retry.queue-type=classic");
		assertThat(conflict.getProblem()).startsWith("2 objects of the retry topology already exist on virtual host "
				+ "'shop floor' with other arguments than this application declares (retry.queue-type=quorum)");
		assertThat(conflict.getMessage()).isEqualTo(conflict.getProblem() + " " + conflict.getFix());
	}

	@Test
	void conflictOfUnknownKindShowsTheBrokersMessageAndOffersNoQueueTypeSwitch() {
		RetryTopologyConflictException conflict = new RetryTopologyConflictException(
				List.of(Conflict.fromBrokerMessage(BROKER_MESSAGE)), QueueType.QUORUM, "orders", false);
		assertThat(conflict.getConflicts()).singleElement().satisfies((queue) -> {
			assertThat(queue.objectType()).isEqualTo("queue");
			assertThat(queue.name()).isEqualTo("retry.delay.1s");
			assertThat(queue.existingType()).isNull();
		});
		assertThat(conflict.getProblem()).contains("queue 'retry.delay.1s': " + BROKER_MESSAGE)
			.doesNotContain("declared nothing");
		assertThat(conflict.getFix()).doesNotContain("Either keep")
			.contains("Find out who declared these queues")
			.contains("rabbitmqctl delete_queue -p orders --if-empty retry.delay.1s");
	}

	@Test
	void conflictingExchangeIsExplainedWithItsBindingsAtStake() {
		RetryTopologyConflictException conflict = new RetryTopologyConflictException(
				List.of(Conflict.fromBrokerMessage("PRECONDITION_FAILED - inequivalent arg 'type' for exchange "
						+ "'retry.delay' in vhost '/': received 'headers' but current is 'fanout'")),
				QueueType.QUORUM, "/", true);
		assertThat(conflict.getFix()).contains("The exchange 'retry.delay' has another type")
			.contains("rabbitmqadmin --vhost=/ delete exchange name=retry.delay")
			.contains("also removes its bindings")
			.doesNotContain("rabbitmqctl delete_queue");
	}

}
