package io.github.tieredretry.reliability;

import java.util.List;
import java.util.Map;

import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.TestApplications;
import io.github.tieredretry.testsupport.TestQueues;
import io.github.tieredretry.topology.QueueType;
import io.github.tieredretry.topology.RetryTopologyConflictException;
import io.github.tieredretry.topology.RetryTopologyConflictException.Conflict;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Queues that already exist with other arguments (left by an application with the other
 * queue type, or declared by hand): queue arguments can never change, so startup must
 * fail, list every conflicting queue with commands for its virtual host, and declare
 * nothing meanwhile.
 */
@ExtendWith(OutputCaptureExtension.class)
class TopologyConflictIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("conflict");

	@Test
	void classicQueuesLeftBehindStopAQuorumApplicationListingEveryOneAndChangingNone(CapturedOutput output) {
		TestQueues.Topology topology = queues.topology();
		String shortTier = topology.shortTierQueue();
		try (BrokerClient broker = new BrokerClient()) {
			// What an application with classic tiers (the default before 0.1.0) left
			// behind.
			RetryTopology classic = declaredBy(topology, QueueType.CLASSIC);
			broker.declareQueue(shortTier, classic.tierArguments(topology.shortTier()));
			broker.declareQueue(topology.parkingLot(), classic.parkingLotArguments());

			assertThatException().isThrownBy(() -> start(topology, "quorum"))
				.satisfies((failure) -> assertThat(conflictIn(failure).getConflicts())
					.extracting(Conflict::name, Conflict::existingType)
					.containsExactlyInAnyOrder(tuple(shortTier, QueueType.CLASSIC),
							tuple(topology.parkingLot(), QueueType.CLASSIC)));
			assertThat(output).contains("APPLICATION FAILED TO START")
				.contains("2 objects of the retry topology already exist on virtual host '/'")
				.contains("queue '" + shortTier + "' exists as a classic queue")
				.contains("queue '" + topology.parkingLot() + "' exists as a classic queue")
				.contains("This application changed none of them; of the retry topology it created only what was "
						+ "missing.")
				.contains("shared by every application on virtual host '/'")
				.contains("Either keep the existing classic queues: set retry.queue-type=classic.")
				.contains("rabbitmqctl delete_queue -p / --if-empty " + shortTier)
				.contains("rabbitmqctl delete_queue -p / --if-empty " + topology.parkingLot());
			// Declared first (no passive declaration, so no error in the broker's log on
			// a first start): what was missing exists now, what conflicts is unchanged.
			assertThat(broker.queueExists(topology.longTierQueue())).isTrue();
			assertThat(broker.declaresEquivalently(shortTier, classic.tierArguments(topology.shortTier()))).isTrue();
		}
	}

	@Test
	void quorumTierQueueLeftBehindStopsAClassicApplicationWithCommandsQuorumQueuesAccept() {
		TestQueues.Topology topology = queues.topology();
		String tierQueue = topology.shortTierQueue();
		try (BrokerClient broker = new BrokerClient()) {
			broker.declareQueue(tierQueue, declaredBy(topology, QueueType.QUORUM).tierArguments(topology.shortTier()));

			assertThatException().isThrownBy(() -> start(topology, "classic")).satisfies((failure) -> {
				RetryTopologyConflictException conflict = conflictIn(failure);
				assertThat(conflict.getConflicts()).singleElement().satisfies((queue) -> {
					assertThat(queue.objectType()).isEqualTo("queue");
					assertThat(queue.name()).isEqualTo(tierQueue);
					assertThat(queue.existingType()).isEqualTo(QueueType.QUORUM);
					assertThat(queue.brokerMessage()).contains("PRECONDITION_FAILED");
				});
				assertThat(conflict.getProblem()).contains("retry.queue-type=classic");
				// RabbitMQ refuses --if-empty for quorum queues.
				assertThat(conflict.getFix()).contains("set retry.queue-type=quorum")
					.contains("rabbitmqctl delete_queue -p / " + tierQueue)
					.contains("rabbitmqctl list_queues -p / name messages");
			});
			assertThat(broker.declaresEquivalently(tierQueue,
					declaredBy(topology, QueueType.QUORUM).tierArguments(topology.shortTier())))
				.isTrue();
		}
	}

	private static RetryTopology declaredBy(TestQueues.Topology topology, QueueType type) {
		return new RetryTopology(TierLadder.of(List.of(topology.shortTier(), topology.longTier())), type,
				topology.parkingLot());
	}

	private static RetryTopologyConflictException conflictIn(Throwable failure) {
		for (Throwable current = failure; current != null; current = current.getCause()) {
			if (current instanceof RetryTopologyConflictException conflict) {
				return conflict;
			}
		}
		throw new AssertionError("No RetryTopologyConflictException in " + failure, failure);
	}

	private static void start(TestQueues.Topology topology, String queueType) {
		Map<String, Object> properties = TestApplications.brokerProperties();
		properties.put("spring.main.web-application-type", "none");
		properties.put("retry.queue-type", queueType);
		properties.put("retry.tiers", topology.tiers());
		properties.put("retry.parking-lot", topology.parkingLot());
		try (ConfigurableApplicationContext context = TestApplications.run(App.class, properties)) {
			throw new AssertionError("The application started despite the conflicting queues");
		}
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

	}

}
