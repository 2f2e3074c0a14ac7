package io.github.tieredretry.reliability;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.OutboundFrames;
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
	void retryStormWhileForwardsCannotReachTheBrokerHoldsTheFailedMessagesAndLosesNothing() {
		Map<String, Object> properties = properties();
		properties.put("test.concurrency", 2);
		try (ProxiedApplication app = ProxiedApplication.start(this.consumerProxy, this.publisherProxy, properties)) {
			this.publisherProxy.cut();
			List<String> ids = new ArrayList<>();
			for (int i = 0; i < 50; i++) {
				ids.add(publish(WORK, "fail-until-retry:1"));
			}

			// Consumers still receive, forwards cannot reach the broker: each failed
			// message is held unacknowledged and its forward tried again after a pause
			// (0.1 s, 0.2 s, 0.4 s, then 0.5 s per outage episode). It is neither given
			// back to its queue, where a quorum queue would count the return, nor handed
			// to the listener again: one attempt each, however often its forward fails.
			await().atMost(Duration.ofSeconds(20))
				.until(() -> ids.stream().allMatch((id) -> app.deliveries().count(id) == 1)
						&& app.events().forwardFailures.size() >= 3 * ids.size());
			assertThat(app.frames().requeueingNacks()).isZero();
			assertThat(app.frames().rejects()).isZero();
			assertThat(ids).allSatisfy((id) -> assertThat(app.deliveries().successes(id)).isZero());
			assertThat(this.broker.count(topology.shortTierQueue())).isZero();

			this.publisherProxy.restore();

			await().atMost(Duration.ofSeconds(60))
				.until(() -> ids.stream().allMatch((id) -> app.deliveries().successes(id) == 1));
			assertThat(ids).allSatisfy(
					(id) -> assertThat(app.deliveries().of(id)).extracting(InvocationRecorder.Invocation::retryCount)
						.containsExactly(0L, 1L));
			assertThat(this.broker.count(topology.parkingLot())).isZero();
			assertThat(app.frames().requeueingNacks()).isZero();
		}
	}

	@Test
	void blipThatFailsEveryForwardInFlightPausesConsumersOnceNotToTheLongestPause() {
		Map<String, Object> properties = properties();
		properties.put("test.concurrency", 2);
		properties.put("retry.publish.failure-initial-pause", "500ms");
		properties.put("retry.publish.failure-max-pause", "15s");
		try (ProxiedApplication app = ProxiedApplication.start(this.consumerProxy, this.publisherProxy, properties)) {
			// Held back, not refused: every message fails and its forward waits behind
			// the
			// frozen connection, so that all 25 are in flight when the blip comes. (With
			// the connection refused from the start, a loaded machine had the first
			// forwards
			// fail, and the consumers pause, before the last messages were consumed: the
			// failures then came in rounds, each a new failure after a pause, and the
			// pause
			// rightly grew to 8 s; seen once on RabbitMQ 4.0.5.)
			this.publisherProxy.freezeUpstream();
			List<String> ids = new ArrayList<>();
			for (int i = 0; i < 25; i++) {
				ids.add(publish(WORK, "fail-until-retry:1"));
			}
			await().atMost(Duration.ofSeconds(10))
				.until(() -> ids.stream().allMatch((id) -> !app.deliveries().of(id).isEmpty()));
			this.publisherProxy.cut();
			this.publisherProxy.thaw();
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
			// The outage lasts until the listener's consumer has lost its connection.
			await().atMost(Duration.ofSeconds(30)).until(() -> !app.events().consumerFailures.isEmpty());
			this.consumerProxy.restore();

			await().atMost(Duration.ofSeconds(90))
				.until(() -> ids.stream().allMatch((id) -> app.deliveries().successes(id) >= 1));
			assertThat(this.broker.count(topology.parkingLot())).isZero();
			// A message whose ack the outage swallowed is delivered again
			// (at-least-once): processed twice at most, for one outage.
			assertThat(ids).allSatisfy((id) -> assertThat(app.deliveries().successes(id)).isBetween(1L, 2L));
		}
	}

	@Test
	void quorumWorkQueueWithADeliveryLimitKeepsAMessageWhoseForwardsKeepFailing() {
		Map<String, Object> properties = properties();
		properties.put("test.limited", LIMITED);
		properties.put("test.limited-with-dead-letters", LIMITED_WITH_DEAD_LETTERS);
		properties.put("test.dead-letters", DEAD_LETTERS);
		try (ProxiedApplication app = ProxiedApplication.start(this.consumerProxy, this.publisherProxy, properties)) {
			this.publisherProxy.cut();
			String limited = publish(LIMITED, "fail-until-retry:1");
			String deadLettered = publish(LIMITED_WITH_DEAD_LETTERS, "fail-until-retry:1");

			// Their forwards fail far more often than the queues' delivery limit of 2:
			// each message is held and forwarded again, never given back (a return would
			// count on RabbitMQ 4.0 to 4.2, and the broker would drop or dead-letter it).
			await().atMost(Duration.ofSeconds(30))
				.until(() -> app.events().forwardFailuresOf(limited) >= 5
						&& app.events().forwardFailuresOf(deadLettered) >= 5);
			assertThat(app.frames().requeueingNacks()).isZero();
			assertThat(app.deliveries().count(limited)).isOne();
			assertThat(app.deliveries().count(deadLettered)).isOne();

			this.publisherProxy.restore();

			await().atMost(Duration.ofSeconds(30))
				.until(() -> app.deliveries().successes(limited) == 1 && app.deliveries().successes(deadLettered) == 1);
			assertThat(app.deliveries().of(limited)).extracting(InvocationRecorder.Invocation::retryCount)
				.containsExactly(0L, 1L);
			assertThat(this.broker.count(DEAD_LETTERS)).isZero();
			assertThat(this.broker.count(topology.parkingLot())).isZero();
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
