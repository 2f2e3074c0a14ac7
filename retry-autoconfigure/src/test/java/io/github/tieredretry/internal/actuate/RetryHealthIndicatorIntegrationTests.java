package io.github.tieredretry.internal.actuate;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.internal.forwarding.PublisherBlockedState;
import io.github.tieredretry.internal.metrics.RetryQueueDepths;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.listener.ListenerGates;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.TestBroker;
import io.github.tieredretry.testsupport.TestQueues;
import io.github.tieredretry.topology.QueueType;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RetryHealthIndicator} against the real broker.
 */
class RetryHealthIndicatorIntegrationTests {

	// A tier length no other test uses, so the tier queue belongs to this class alone.
	static final Duration TIER = Duration.ofMillis(7933);

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("health");

	static final String TIER_QUEUE = queues.owned(RetryTopology.tierQueueName(TIER));

	static final String PARKING_LOT = queues.name("parking");

	static CachingConnectionFactory connectionFactory;

	@BeforeAll
	static void declareQueues() {
		connectionFactory = new CachingConnectionFactory(TestBroker.get().clientConnectionFactory());
		try (BrokerClient client = new BrokerClient()) {
			client.declareQueue(TIER_QUEUE);
			client.declareQueue(PARKING_LOT);
			client.publish("", PARKING_LOT, new AMQP.BasicProperties.Builder().deliveryMode(2).build(),
					"parked".getBytes(StandardCharsets.UTF_8));
		}
	}

	@AfterAll
	static void closeConnections() {
		connectionFactory.destroy();
	}

	@Test
	void isUpWithTheDepthsWhenEveryQueueExists() {
		Health health = indicator(PARKING_LOT).health();

		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).containsEntry("tiers", Map.of(TIER_QUEUE, 0L))
			.containsEntry("parkingLot", Map.of("queue", PARKING_LOT, "depth", 1L))
			.doesNotContainKey("missingQueues");
	}

	@Test
	void isDownWhenTheParkingLotIsMissing() {
		String missing = PARKING_LOT + "-missing";

		Health health = indicator(missing).health();

		assertThat(health.getStatus()).isEqualTo(Status.DOWN);
		assertThat(health.getDetails()).containsEntry("missingQueues", java.util.Set.of(missing))
			.containsEntry("parkingLot", Map.of("queue", missing))
			.containsEntry("tiers", Map.of(TIER_QUEUE, 0L));
	}

	@Test
	void isDownWhenATierQueueIsMissing() {
		// Never declared: a tier length no test uses.
		Duration missingTier = Duration.ofMillis(7937);
		String missing = RetryTopology.tierQueueName(missingTier);

		Health health = indicator(PARKING_LOT, TIER, missingTier).health();

		assertThat(health.getStatus()).isEqualTo(Status.DOWN);
		assertThat(health.getDetails()).containsEntry("missingQueues", java.util.Set.of(missing))
			.containsEntry("tiers", Map.of(TIER_QUEUE, 0L))
			.containsEntry("parkingLot", Map.of("queue", PARKING_LOT, "depth", 1L));
	}

	@Test
	void staysUpAndSaysSoWhileTheBrokerBlocksForwardingAndCountsTheBlocks() {
		PublisherBlockedState publisher = new PublisherBlockedState(Clock.systemUTC(), (event) -> {
		});
		RetryHealthIndicator indicator = indicator(PARKING_LOT, publisher, TIER);
		assertThat(indicator.health().getDetails()).containsEntry("publisher",
				Map.of("state", "running", "blocks", 0L));

		publisher.handleBlocked("low on memory");
		Health blocked = indicator.health();
		// Healthy messages keep flowing, failed ones wait: the application is not down,
		// the broker has an alarm.
		assertThat(blocked.getStatus()).isEqualTo(Status.UP);
		assertThat(blocked.getDetails().get("publisher")).asInstanceOf(InstanceOfAssertFactories.MAP)
			.containsEntry("state", "blocked")
			.containsEntry("reason", "low on memory")
			.containsEntry("blocks", 1L)
			.containsKeys("since", "effect");

		publisher.handleUnblocked();
		assertThat(indicator.health().getDetails()).containsEntry("publisher",
				Map.of("state", "running", "blocks", 1L));
	}

	private RetryHealthIndicator indicator(String parkingLot) {
		return indicator(parkingLot, TIER);
	}

	private RetryHealthIndicator indicator(String parkingLot, Duration... tiers) {
		return indicator(parkingLot, null, tiers);
	}

	private RetryHealthIndicator indicator(String parkingLot, PublisherBlockedState publisher, Duration... tiers) {
		RetryTopology topology = new RetryTopology(TierLadder.of(List.of(tiers)), QueueType.CLASSIC, parkingLot);
		return new RetryHealthIndicator(
				new RetryQueueDepths(connectionFactory, topology, Duration.ofSeconds(5), Clock.systemUTC()), topology,
				publisher, ListenerGates.WITHOUT_BREAKERS);
	}

}
