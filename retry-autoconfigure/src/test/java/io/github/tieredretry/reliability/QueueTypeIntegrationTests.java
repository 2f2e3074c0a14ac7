package io.github.tieredretry.reliability;

import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.ScriptHeaderMessages;
import io.github.tieredretry.testsupport.TestQueues;
import io.github.tieredretry.topology.QueueType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Quorum tiers by default, and the documented way from classic to quorum tiers
 * (docs/migration.md): stop the applications, let the tiers drain into their work queues,
 * replay what is parked, delete the classic queues with {@code --if-empty}, start with
 * quorum tiers. Nothing is lost on the way.
 */
class QueueTypeIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("queue-type");

	/**
	 * A topology per test: the migration deletes its queues and declares them again as
	 * another type.
	 */
	final TestQueues.Topology topology = queues.topology();

	String work;

	TcpProxy proxy;

	BrokerClient broker;

	@BeforeEach
	void connect(TestInfo test) {
		this.work = queues.name(test.getTestMethod().orElseThrow().getName());
		this.proxy = TcpProxy.toTestBroker();
		this.broker = queues.broker();
	}

	@AfterEach
	void closeProxy() {
		this.proxy.close();
	}

	@Test
	void applicationThatSetsNothingGetsQuorumTiersAndAQuorumParkingLot() {
		try (ProxiedApplication app = ProxiedApplication.start(this.proxy, null, properties(null))) {
			RetryTopology quorum = declaredBy(QueueType.QUORUM);
			assertThat(this.broker.declaresEquivalently(this.topology.shortTierQueue(),
					quorum.tierArguments(this.topology.shortTier())))
				.isTrue();
			assertThat(this.broker.declaresEquivalently(this.topology.parkingLot(), quorum.parkingLotArguments()))
				.isTrue();
			String id = publish("fail-until-retry:1");
			await().atMost(Duration.ofSeconds(20)).until(() -> app.deliveries().successes(id) == 1);
		}
	}

	@Test
	void classicTiersAreReplacedByQuorumTiersByDrainingThenSwitchingWithoutLosingAMessage() {
		String parked;
		String waiting;
		try (ProxiedApplication classic = ProxiedApplication.start(this.proxy, null, properties("classic"))) {
			parked = publish("always");
			await().atMost(Duration.ofSeconds(20)).until(() -> this.broker.count(this.topology.parkingLot()) == 1);
			waiting = publish("fail-until-retry:1");
			await().atMost(Duration.ofSeconds(10)).until(() -> this.broker.count(this.topology.longTierQueue()) == 1);
		}
		// 1. The applications are stopped: the tiers drain into their work queues, nobody
		// refills them.
		await().atMost(Duration.ofSeconds(15))
			.until(() -> this.broker.count(this.topology.longTierQueue()) == 0
					&& this.broker.count(this.topology.shortTierQueue()) == 0 && this.broker.count(this.work) == 1);
		// 2. What is parked goes back to its queue (the endpoint's replay, by hand here).
		for (BrokerClient.Received message : this.broker.drain(this.topology.parkingLot())) {
			this.broker.publish("", this.work, withoutRetryState(message.properties()), message.body());
		}
		// 3. rabbitmqctl delete_queue -p / --if-empty <queue>, for each classic queue.
		for (String queue : List.of(this.topology.shortTierQueue(), this.topology.longTierQueue(),
				this.topology.parkingLot())) {
			deleteIfEmpty(queue);
			assertThat(this.broker.queueExists(queue)).as(queue).isFalse();
		}
		// 4. Start with quorum tiers: the drained retry runs, the replayed message starts
		// a fresh cycle.
		try (ProxiedApplication quorum = ProxiedApplication.start(this.proxy, null, properties(null))) {
			await().atMost(Duration.ofSeconds(20)).until(() -> quorum.deliveries().successes(waiting) == 1);
			assertThat(quorum.deliveries().of(waiting)).singleElement()
				.satisfies((invocation) -> assertThat(invocation.retryCount()).isEqualTo(1));
			await().atMost(Duration.ofSeconds(20)).until(() -> this.broker.count(this.topology.parkingLot()) == 1);
			assertThat(quorum.deliveries().of(parked)).hasSize(2);
			assertThat(this.broker.declaresEquivalently(this.topology.parkingLot(),
					declaredBy(QueueType.QUORUM).parkingLotArguments()))
				.isTrue();
		}
	}

	private Map<String, Object> properties(String queueType) {
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("test.work", this.work);
		properties.put("retry.tiers", this.topology.tiers());
		properties.put("retry.parking-lot", this.topology.parkingLot());
		properties.put("retry.defaults.max-retries", 1);
		// The long tier, so that a retry is still waiting in it when the application
		// stops.
		properties.put("retry.defaults.delays", this.topology.longTier().toMillis() + "ms");
		if (queueType != null) {
			properties.put("retry.queue-type", queueType);
		}
		return properties;
	}

	private RetryTopology declaredBy(QueueType type) {
		return new RetryTopology(TierLadder.of(List.of(this.topology.shortTier(), this.topology.longTier())), type,
				this.topology.parkingLot());
	}

	private String publish(String script) {
		return ScriptHeaderMessages.publish(this.broker, this.work, script);
	}

	private static AMQP.BasicProperties withoutRetryState(AMQP.BasicProperties parked) {
		Map<String, Object> headers = new HashMap<>(parked.getHeaders());
		headers.keySet().removeIf((name) -> name.startsWith("retry-") || name.startsWith("x-"));
		return parked.builder().headers(headers).build();
	}

	private void deleteIfEmpty(String queue) {
		try {
			this.broker.channel().queueDelete(queue, false, true);
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
