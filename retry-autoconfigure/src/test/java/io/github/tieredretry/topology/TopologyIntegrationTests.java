package io.github.tieredretry.topology;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The broker objects the starter declares: a handful shared by every listener, and
 * declared again when a connection is re-established. The scheduled topology check, which
 * deletes a shared exchange, runs on a node of its own:
 * {@code TopologyGuardianIntegrationTests} in module {@code reliability}.
 * <p>
 * The tier durations are used by no other test class, so that deleting one cannot disturb
 * them.
 */
@SpringBootTest
@RabbitIntegrationTest
class TopologyIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("topology");

	static final List<String> QUEUES = List.of(queues.name("a"), queues.name("b"), queues.name("c"));

	static final String PARKING_LOT = queues.parkingLotName();

	static {
		queues.settings((settings) -> {
			for (int i = 0; i < QUEUES.size(); i++) {
				settings.set("test.queue-" + i, QUEUES.get(i));
			}
			// Earlier runs (and other worktrees' runs) of this test left these tiers as
			// classic queues on the test broker.
			settings.set("retry.tiers", "1170ms, 2270ms").set("retry.queue-type", "classic");
			// Only the reconnection may declare a deleted queue again here; the scheduled
			// check runs in TopologyGuardianIntegrationTests (module reliability).
			settings.set("retry.topology.check-interval", "0");
		});
	}

	@Autowired
	RetryTopology topology;

	@Autowired
	CachingConnectionFactory connectionFactory;

	@Test
	void threeListenersShareTwoTierQueuesOneParkingLotAndFiveExchanges() {
		assertThat(this.topology.tierQueueNames()).containsExactly("retry.delay.1170ms", "retry.delay.2270ms");
		assertThat(this.topology.exchanges()).extracting("name")
			.containsExactlyInAnyOrder("retry.delay", "retry.return", "retry.unroutable", "retry.parked",
					"retry.unclaimed");
		assertThat(this.topology.queues()).hasSize(3);
		// Bound to retry.return like the work queues: the scheduled queue, where the
		// tiers
		// return delayed sends (shared, for an application without a name).
		assertThat(this.topology.workQueues()).containsAll(QUEUES)
			.contains("retry.scheduled")
			.hasSize(QUEUES.size() + 1);
		Map<String, Object> tierArguments = Map.of("x-message-ttl", 1170, "x-dead-letter-exchange", "retry.return");
		assertThat(queues.broker().declaresEquivalently("retry.delay.1170ms", tierArguments)).isTrue();
		assertThat(queues.broker().declaresEquivalently(PARKING_LOT, Map.of())).isTrue();
		// Whatever its type: another application may have declared it first.
		assertThat(queues.broker().queueExists(RetryTopology.SHARED_PARKING_LOT)).isTrue();
	}

	@Test
	void deletedTierQueueIsDeclaredAgainWhenTheConnectionIsReestablished() {
		try (BrokerClient client = new BrokerClient()) {
			client.deleteQueue("retry.delay.2270ms");
			assertThat(client.queueExists("retry.delay.2270ms")).isFalse();
			this.connectionFactory.resetConnection();
			// Any use of the connection factory reconnects; the admin then declares the
			// Declarables.
			this.connectionFactory.createConnection().close();
			await().atMost(Duration.ofSeconds(10)).until(() -> client.queueExists("retry.delay.2270ms"));
		}
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@Bean
		Queue queueA() {
			return new Queue(QUEUES.get(0));
		}

		@Bean
		Queue queueB() {
			return new Queue(QUEUES.get(1));
		}

		@Bean
		Queue queueC() {
			return new Queue(QUEUES.get(2));
		}

		@Bean
		Listeners listeners() {
			return new Listeners();
		}

	}

	static class Listeners {

		@RabbitListener(queues = "${test.queue-0}")
		@RetryableListener
		void onA(Message message) {
		}

		@RabbitListener(queues = "${test.queue-1}")
		@RetryableListener
		void onB(Message message) {
		}

		@RabbitListener(queues = "${test.queue-2}")
		@RetryableListener(maxRetries = 1)
		void onC(Message message) {
		}

	}

}
