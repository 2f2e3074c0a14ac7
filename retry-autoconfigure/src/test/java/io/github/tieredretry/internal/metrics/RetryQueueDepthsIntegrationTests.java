package io.github.tieredretry.internal.metrics;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.MutableClock;
import io.github.tieredretry.testsupport.TestBroker;
import io.github.tieredretry.testsupport.TestQueues;
import io.github.tieredretry.topology.QueueType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RetryQueueDepths} against the real broker: depths of existing queues, missing
 * queues, and the cache that keeps scrapes from reaching the broker.
 */
class RetryQueueDepthsIntegrationTests {

	// Tier lengths no other test uses, so the tier queues belong to this class alone.
	static final Duration FIRST_TIER = Duration.ofMillis(7919);

	static final Duration MISSING_TIER = Duration.ofMillis(7927);

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("depths");

	static final String PARKING_LOT = queues.name("parking");

	static final String FIRST_TIER_QUEUE = queues.owned(RetryTopology.tierQueueName(FIRST_TIER));

	static CachingConnectionFactory connectionFactory;

	MutableClock clock = new MutableClock(Instant.parse("2026-03-01T10:00:00Z"));

	RetryQueueDepths depths;

	BrokerClient broker;

	@BeforeAll
	static void declareQueues() {
		connectionFactory = new CachingConnectionFactory(TestBroker.get().clientConnectionFactory());
		try (BrokerClient client = new BrokerClient()) {
			// Plain queues: a passive declaration does not care about arguments.
			client.declareQueue(FIRST_TIER_QUEUE);
			client.declareQueue(PARKING_LOT);
		}
	}

	@AfterAll
	static void closeConnections() {
		connectionFactory.destroy();
	}

	@BeforeEach
	void setUp() {
		this.broker = new BrokerClient();
		this.broker.purge(FIRST_TIER_QUEUE);
		this.broker.purge(PARKING_LOT);
		RetryTopology topology = new RetryTopology(TierLadder.of(List.of(FIRST_TIER, MISSING_TIER)), QueueType.CLASSIC,
				PARKING_LOT);
		this.depths = new RetryQueueDepths(connectionFactory, topology, Duration.ofSeconds(5), this.clock);
	}

	@AfterEach
	void closeClient() {
		this.broker.close();
	}

	@Test
	void readsTheDepthOfEveryTierQueueAndTheParkingLot() {
		publish(FIRST_TIER_QUEUE, 2);
		publish(PARKING_LOT, 3);

		RetryQueueDepths.Snapshot snapshot = this.depths.current();

		assertThat(this.depths.queues()).containsExactly(FIRST_TIER_QUEUE, RetryTopology.tierQueueName(MISSING_TIER),
				PARKING_LOT);
		assertThat(snapshot.isRead()).isTrue();
		assertThat(snapshot.depthOf(FIRST_TIER_QUEUE)).isEqualTo(2);
		assertThat(snapshot.depthOf(PARKING_LOT)).isEqualTo(3);
	}

	@Test
	void aMissingQueueHasNoDepthAndDoesNotHideTheOthers() {
		publish(PARKING_LOT, 1);

		RetryQueueDepths.Snapshot snapshot = this.depths.current();

		assertThat(snapshot.missing()).containsExactly(RetryTopology.tierQueueName(MISSING_TIER));
		assertThat(snapshot.depthOf(RetryTopology.tierQueueName(MISSING_TIER))).isNull();
		assertThat(snapshot.depthOf(PARKING_LOT)).isEqualTo(1);
	}

	@Test
	void depthsAreReusedUntilTheyAreOlderThanTheMaximumAge() {
		publish(PARKING_LOT, 1);
		assertThat(this.depths.current().depthOf(PARKING_LOT)).isEqualTo(1);

		publish(PARKING_LOT, 1);
		this.clock.advance(Duration.ofMillis(4999));
		assertThat(this.depths.current().depthOf(PARKING_LOT)).as("cached").isEqualTo(1);

		this.clock.advance(Duration.ofMillis(1));
		assertThat(this.depths.current().depthOf(PARKING_LOT)).as("read again").isEqualTo(2);
	}

	@Test
	void refreshReadsAtOnce() {
		assertThat(this.depths.current().depthOf(PARKING_LOT)).isZero();
		publish(PARKING_LOT, 1);

		assertThat(this.depths.refresh().depthOf(PARKING_LOT)).isEqualTo(1);
		assertThat(this.depths.current().depthOf(PARKING_LOT)).isEqualTo(1);
	}

	@Test
	void anUnreachableBrokerIsReportedNotThrown() {
		com.rabbitmq.client.ConnectionFactory nowhere = TestBroker.get().clientConnectionFactory();
		nowhere.setPort(1);
		CachingConnectionFactory unreachable = new CachingConnectionFactory(nowhere);
		try {
			RetryTopology topology = new RetryTopology(TierLadder.of(List.of(FIRST_TIER)), QueueType.CLASSIC,
					PARKING_LOT);
			RetryQueueDepths.Snapshot snapshot = new RetryQueueDepths(unreachable, topology, Duration.ofSeconds(5),
					this.clock)
				.current();

			assertThat(snapshot.isRead()).isFalse();
			assertThat(snapshot.failure()).isNotBlank();
			assertThat(snapshot.depthOf(PARKING_LOT)).isNull();
		}
		finally {
			unreachable.destroy();
		}
	}

	private void publish(String queue, int count) {
		for (int i = 0; i < count; i++) {
			this.broker.publish("", queue, new AMQP.BasicProperties.Builder().deliveryMode(2).build(),
					"waiting".getBytes(StandardCharsets.UTF_8));
		}
	}

}
