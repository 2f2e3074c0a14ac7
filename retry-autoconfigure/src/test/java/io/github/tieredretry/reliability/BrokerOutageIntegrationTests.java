package io.github.tieredretry.reliability;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.Script;
import io.github.tieredretry.testsupport.TestBroker;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The broker unreachable, at startup and in the middle of a retry storm, through proxies
 * in front of the test broker (which other suites share, so it is never restarted here):
 * the application starts, no message is acked without its forward confirmed, consumers
 * pause instead of looping, and everything recovers when the broker is back.
 */
class BrokerOutageIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("outage");

	static final TestQueues.Topology topology = queues.topology();

	static final String WORK = queues.name("work");

	static final String LIMITED = queues.name("limited");

	static final String LIMITED_WITH_DEAD_LETTERS = queues.name("limited-dlx");

	static final String DEAD_LETTERS = queues.name("dead-letters");

	TcpProxy consumerProxy;

	TcpProxy publisherProxy;

	BrokerClient broker;

	@BeforeEach
	void startProxies() {
		TestBroker upstream = TestBroker.get();
		this.consumerProxy = new TcpProxy(upstream.host(), upstream.port());
		this.publisherProxy = new TcpProxy(upstream.host(), upstream.port());
		this.broker = new BrokerClient();
	}

	@AfterEach
	void stopProxies() {
		this.consumerProxy.close();
		this.publisherProxy.close();
		this.broker.close();
	}

	@Test
	void applicationStartsWithoutTheBrokerAndDeclaresTheRetryTopologyWhenItComesBack() {
		// Tiers and queues of its own: nothing of the topology may exist before the
		// broker comes back.
		TestQueues.Topology fresh = queues.topology();
		String work = queues.name("late-work");
		this.consumerProxy.cut();
		try (ProxiedApplication app = ProxiedApplication.start(this.consumerProxy, null, properties(fresh, work))) {
			assertThat(app.isRunning()).isTrue();
			assertThat(this.broker.queueExists(fresh.shortTierQueue())).isFalse();

			this.consumerProxy.restore();

			await().atMost(Duration.ofSeconds(30))
				.until(() -> this.broker.queueExists(work) && this.broker.queueExists(fresh.shortTierQueue())
						&& this.broker.queueExists(fresh.parkingLot()));
			String id = publish(work, "fail-until-retry:1");
			await().atMost(Duration.ofSeconds(20)).until(() -> app.deliveries().successes(id) == 1);
			assertThat(app.deliveries().of(id)).extracting(InvocationRecorder.Invocation::retryCount)
				.containsExactly(0L, 1L);
		}
	}

	@Test
	void retryStormWhileForwardsCannotReachTheBrokerPausesConsumersAndLosesNothing() {
		Map<String, Object> properties = properties();
		properties.put("test.concurrency", 2);
		try (ProxiedApplication app = ProxiedApplication.start(this.consumerProxy, this.publisherProxy, properties)) {
			this.publisherProxy.cut();
			List<String> ids = new ArrayList<>();
			for (int i = 0; i < 50; i++) {
				ids.add(publish(WORK, "fail-until-retry:1"));
			}

			await().atMost(Duration.ofSeconds(10)).until(() -> !app.events().forwardFailures.isEmpty());
			Instant windowStart = Instant.now();
			// Consumers still receive, forwards cannot reach the broker: every failure
			// waits out a pause before its message goes back, instead of spinning through
			// redeliveries. The failures of one outage are one episode at a time (here
			// 0.1 s, 0.2 s, 0.4 s, then 0.5 s each), so in 4 s each message is tried
			// again about ten times at most; a hot loop would try it hundreds of times.
			await().pollDelay(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(5)).until(() -> true);
			Instant windowEnd = Instant.now();
			Map<String, Long> attemptsDuringOutage = ids.stream()
				.collect(Collectors.toMap((id) -> id, (id) -> app.deliveries()
					.of(id)
					.stream()
					.filter((invocation) -> invocation.at().isAfter(windowStart) && invocation.at().isBefore(windowEnd))
					.count()));
			assertThat(attemptsDuringOutage.values()).as("attempts per message in 4 s without forwarding")
				.allSatisfy((attempts) -> assertThat(attempts).isLessThanOrEqualTo(12));
			// The requeues are nacks, never rejects: RabbitMQ 4.3 counts a reject towards
			// a quorum work queue's delivery limit, and these messages are not at fault.
			assertThat(app.frames().requeueingNacks()).isPositive();
			assertThat(app.frames().rejects()).isZero();
			assertThat(ids).allSatisfy((id) -> assertThat(app.deliveries().successes(id)).isZero());
			assertThat(this.broker.count(topology.shortTierQueue())).isZero();

			this.publisherProxy.restore();

			await().atMost(Duration.ofSeconds(60))
				.until(() -> ids.stream().allMatch((id) -> app.deliveries().successes(id) == 1));
			assertThat(ids).allSatisfy((id) -> assertThat(app.deliveries().of(id)).last()
				.extracting(InvocationRecorder.Invocation::retryCount)
				.isEqualTo(1L));
			assertThat(this.broker.count(topology.parkingLot())).isZero();
		}
	}

	@Test
	void blipThatFailsEveryForwardInFlightPausesConsumersOnceNotToTheLongestPause() {
		Map<String, Object> properties = properties();
		properties.put("test.concurrency", 2);
		properties.put("retry.publish.failure-initial-pause", "500ms");
		properties.put("retry.publish.failure-max-pause", "15s");
		try (ProxiedApplication app = ProxiedApplication.start(this.consumerProxy, this.publisherProxy, properties)) {
			this.publisherProxy.cut();
			List<String> ids = new ArrayList<>();
			for (int i = 0; i < 25; i++) {
				ids.add(publish(WORK, "fail-until-retry:1"));
			}
			// The forwards of every failed message fail together: one outage, one
			// episode.
			await().atMost(Duration.ofSeconds(10)).until(() -> app.events().forwardFailures.size() >= 25);
			this.publisherProxy.restore();
			Instant restored = Instant.now();

			// Counted one failure at a time, 25 failures doubled the pause up to 15 s
			// before anything moved again.
			await().atMost(Duration.ofSeconds(8))
				.until(() -> ids.stream().allMatch((id) -> app.deliveries().successes(id) == 1));
			assertThat(Duration.between(restored, Instant.now())).isLessThan(Duration.ofSeconds(8));
		}
	}

	@Test
	void messagesWaitingForTheirPauseGoBackWithANackWhenTheApplicationStops() {
		Map<String, Object> properties = properties();
		properties.put("retry.publish.failure-initial-pause", "8s");
		properties.put("retry.publish.failure-max-pause", "8s");
		// One message per consumer: each fails before any consumer pauses for the first
		// failed forward.
		properties.put("test.concurrency", 5);
		properties.put("spring.rabbitmq.listener.simple.prefetch", 1);
		List<String> ids = new ArrayList<>();
		ProxiedApplication app = ProxiedApplication.start(this.consumerProxy, this.publisherProxy, properties);
		OutboundFrames frames = app.frames();
		try {
			this.publisherProxy.cut();
			for (int i = 0; i < 5; i++) {
				ids.add(publish(WORK, "fail-until-retry:1"));
			}
			await().atMost(Duration.ofSeconds(10)).until(() -> app.events().forwardFailures.size() >= 5);
		}
		finally {
			app.close();
		}
		// Not left to the closing channel (which RabbitMQ 4.3 counts as a failed
		// delivery): nacked first.
		assertThat(frames.requeueingNacks()).isGreaterThanOrEqualTo(5);
		assertThat(frames.rejects()).isZero();
		await().atMost(Duration.ofSeconds(5)).until(() -> this.broker.count(WORK) == 5);
		this.broker.purge(WORK);
	}

	@Test
	void retryStormThroughABrokerOutageRecoversWhenTheBrokerComesBack() {
		try (ProxiedApplication app = ProxiedApplication.start(this.consumerProxy, null, properties())) {
			List<String> ids = new ArrayList<>();
			for (int i = 0; i < 200; i++) {
				ids.add(publish(WORK, "fail-until-retry:1"));
			}
			await().atMost(Duration.ofSeconds(20)).until(() -> app.deliveries().total() >= 50);

			this.consumerProxy.cut();
			await().pollDelay(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(4)).until(() -> true);
			this.consumerProxy.restore();

			await().atMost(Duration.ofSeconds(90))
				.until(() -> ids.stream().allMatch((id) -> app.deliveries().successes(id) >= 1));
			assertThat(this.broker.count(topology.parkingLot())).isZero();
			long duplicates = ids.stream().mapToLong((id) -> app.deliveries().successes(id) - 1).sum();
			System.out.println("Retry storm through a broker outage: 200 messages, " + duplicates + " processed twice");
		}
	}

	@Test
	void quorumWorkQueueDeliveryLimitDropsAMessageWhoseForwardsKeepFailing() {
		Map<String, Object> properties = properties();
		properties.put("test.limited", LIMITED);
		properties.put("test.limited-with-dead-letters", LIMITED_WITH_DEAD_LETTERS);
		properties.put("test.dead-letters", DEAD_LETTERS);
		try (ProxiedApplication app = ProxiedApplication.start(this.consumerProxy, this.publisherProxy, properties)) {
			this.publisherProxy.cut();
			String dropped = publish(LIMITED, "fail-until-retry:1");
			String deadLettered = publish(LIMITED_WITH_DEAD_LETTERS, "fail-until-retry:1");

			// Each failed forward requeues the message, and the quorum queue counts every
			// requeue as a delivery: past the limit the broker removes the message,
			// whatever the application does.
			await().atMost(Duration.ofSeconds(30))
				.until(() -> app.deliveries().count(dropped) == 3 && app.deliveries().count(deadLettered) == 3
						&& this.broker.count(DEAD_LETTERS) == 1);
			this.publisherProxy.restore();

			await().during(Duration.ofSeconds(3))
				.atMost(Duration.ofSeconds(5))
				.until(() -> app.deliveries().count(dropped) == 3 && app.deliveries().successes(dropped) == 0);
			assertThat(this.broker.count(LIMITED)).isZero();
			assertThat(this.broker.count(topology.parkingLot())).isZero();
			assertThat(this.broker.drain(DEAD_LETTERS)).singleElement()
				.satisfies((message) -> assertThat(message.properties().getMessageId()).isEqualTo(deadLettered));
		}
	}

	private static Map<String, Object> properties() {
		return properties(topology, WORK);
	}

	private static Map<String, Object> properties(TestQueues.Topology topology, String workQueue) {
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("test.work", workQueue);
		properties.put("retry.parking-lot", topology.parkingLot());
		properties.put("retry.tiers", topology.tiers());
		properties.put("retry.defaults.max-retries", 2);
		properties.put("retry.defaults.delays", topology.shortTier().toMillis() + "ms");
		properties.put("retry.publish.confirm-timeout", "2s");
		properties.put("retry.publish.failure-initial-pause", "100ms");
		properties.put("retry.publish.failure-max-pause", "500ms");
		return properties;
	}

	private String publish(String queue, String script) {
		String id = UUID.randomUUID().toString();
		AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().messageId(id)
			.deliveryMode(2)
			.contentType("text/plain")
			.headers(Map.of(Script.HEADER, script))
			.build();
		this.broker.publish("", queue, properties, "payload".getBytes(StandardCharsets.UTF_8));
		return id;
	}

}
