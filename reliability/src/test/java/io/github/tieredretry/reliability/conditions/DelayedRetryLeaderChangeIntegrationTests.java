package io.github.tieredretry.reliability.conditions;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import io.github.tieredretry.testbrokers.HarnessBrokers;
import io.github.tieredretry.testbrokers.LocalRabbitCluster;
import io.github.tieredretry.testbrokers.LocalRabbitNode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * RabbitMQ 4.3's delayed retry across a leader change: every replica of a quorum queue
 * holds the time each delayed message is due, so when the leader's node is killed the new
 * leader delivers the messages when they were due, not a delay later. On a three-node
 * cluster of its own; before 4.3 the messages are back at once. docs/delayed-retry.md
 * states this and links here.
 */
class DelayedRetryLeaderChangeIntegrationTests {

	static final String QUEUE = "leader-change";

	static final Duration DELAY = Duration.ofSeconds(12);

	static final int MESSAGES = 3;

	@Test
	void newLeaderDeliversDelayedMessagesWhenTheyWereDue() throws Exception {
		Path work = Path.of(System.getProperty("reliability.work-dir", "target/fault-run"))
			.resolve("delayed-retry-cluster")
			.toAbsolutePath();
		try (LocalRabbitCluster cluster = HarnessBrokers.startCluster(work, 3)) {
			LocalRabbitNode first = cluster.nodes().get(0);
			boolean delayedRetry;
			long returned;
			try (Connection connection = first.connect("/", "give-back")) {
				delayedRetry = ConditionsBroker.hasDelayedRetry(connection);
				returned = giveBackDelayed(connection, delayedRetry);
			}
			if (!delayedRetry) {
				try (Connection connection = first.connect("/", "no-delay")) {
					Channel channel = connection.createChannel();
					await().atMost(DELAY.minusSeconds(1))
						.until(() -> channel.queueDeclarePassive(QUEUE).getMessageCount() == MESSAGES);
				}
				return;
			}

			String leaderName = cluster.leaders("/").get(QUEUE);
			LocalRabbitNode leader = cluster.nodes()
				.stream()
				.filter((node) -> node.node().equals(leaderName))
				.findFirst()
				.orElseThrow();
			LocalRabbitNode follower = cluster.nodes()
				.stream()
				.filter((node) -> node != leader)
				.findFirst()
				.orElseThrow();
			cluster.kill(leader, "/");
			assertThat(cluster.leaders("/").get(QUEUE)).isNotEqualTo(leaderName);
			assertThat(System.currentTimeMillis()).as("a new leader before the delay ended")
				.isLessThan(returned + DELAY.toMillis() - 2000);

			try (Connection connection = follower.connect("/", "after-leader-change")) {
				Channel channel = connection.createChannel();
				channel.basicQos(10);
				Arrivals arrivals = new Arrivals(channel);
				channel.basicConsume(QUEUE, false, arrivals);
				for (int i = 1; i <= MESSAGES; i++) {
					assertThat(arrivals.arrival(i, DELAY.plusSeconds(30)).epochMillis()).as("arrived, in epoch ms")
						.isBetween(returned + DELAY.toMillis() - 5, returned + DELAY.toMillis() + 1000);
				}
				// Each once: none lost, none twice. A window, not an event: a second copy
				// would come out of its delay like the first, and a marker published now
				// would be ready at once, so its arrival says nothing about such a copy.
				await().during(Duration.ofSeconds(1))
					.atMost(Duration.ofSeconds(3))
					.until(() -> arrivals.arrivals().size() == MESSAGES);
			}
		}
	}

	/**
	 * Declare the queue, publish messages to it and give them back with
	 * {@code basic.reject}, so that each waits for the delay.
	 * @param connection a connection to any node
	 * @param delayedRetry whether the broker delays them
	 * @return when they were given back, in epoch milliseconds
	 */
	private long giveBackDelayed(Connection connection, boolean delayedRetry) throws Exception {
		Channel channel = connection.createChannel();
		channel.queueDeclare(QUEUE, true, false, false, Map.of("x-queue-type", "quorum", "x-delayed-retry-type", "all",
				"x-delayed-retry-min", DELAY.toMillis(), "x-delayed-retry-max", DELAY.toMillis()));
		return GiveBack.rejectAll(channel, QUEUE, MESSAGES, delayedRetry);
	}

}
