package io.github.tieredretry.reliability;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.OutboundFrames;
import io.github.tieredretry.testsupport.ScriptHeaderMessages;
import io.github.tieredretry.testsupport.TestQueues;
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

	@RegisterExtension
	final BrokerProxies proxies = new BrokerProxies();

	@Test
	void applicationStartsWithoutTheBrokerAndDeclaresTheRetryTopologyWhenItComesBack() {
		// Tiers and queues of its own: nothing of the topology may exist before the
		// broker comes back.
		TestQueues.Topology fresh = queues.topology();
		String work = queues.name("late-work");
		this.proxies.consumer().cut();
		try (ProxiedApplication app = this.proxies.startThroughTheConsumerProxy(properties(fresh, work))) {
			assertThat(app.isRunning()).isTrue();
			assertThat(queues.broker().queueExists(fresh.shortTierQueue())).isFalse();

			this.proxies.consumer().restore();

			await().atMost(Duration.ofSeconds(30))
				.until(() -> queues.broker().queueExists(work) && queues.broker().queueExists(fresh.shortTierQueue())
						&& queues.broker().queueExists(fresh.parkingLot()));
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
		try (ProxiedApplication app = this.proxies.start(properties)) {
			this.proxies.publisher().cut();
			List<String> ids = publishFailingOnce(50);

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
			assertThat(queues.broker().count(topology.shortTierQueue())).isZero();

			this.proxies.publisher().restore();

			await().atMost(Duration.ofSeconds(60))
				.until(() -> ids.stream().allMatch((id) -> app.deliveries().successes(id) == 1));
			assertThat(ids).allSatisfy(
					(id) -> assertThat(app.deliveries().of(id)).extracting(InvocationRecorder.Invocation::retryCount)
						.containsExactly(0L, 1L));
			assertThat(queues.broker().count(topology.parkingLot())).isZero();
			assertThat(app.frames().requeueingNacks()).isZero();
		}
	}

	@Test
	void blipThatFailsEveryForwardInFlightPausesConsumersOnceNotToTheLongestPause() {
		Map<String, Object> properties = properties();
		properties.put("test.concurrency", 2);
		properties.put("retry.publish.failure-initial-pause", "500ms");
		properties.put("retry.publish.failure-max-pause", "15s");
		try (ProxiedApplication app = this.proxies.start(properties)) {
			// Held back, not refused: every message fails and its forward waits behind
			// the frozen connection, so that all 25 are in flight when the blip comes.
			// (With the connection refused from the start, a loaded machine had the
			// first forwards fail, and the consumers pause, before the last messages
			// were consumed: the failures then came in rounds, each a new failure after
			// a pause, and the pause rightly grew to 8 s; seen once on RabbitMQ 4.0.5.)
			this.proxies.publisher().freezeUpstream();
			List<String> ids = publishFailingOnce(25);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> ids.stream().allMatch((id) -> !app.deliveries().of(id).isEmpty()));
			this.proxies.publisher().cut();
			this.proxies.publisher().thaw();
			// The forwards of every failed message fail together: one outage, one
			// episode.
			await().atMost(Duration.ofSeconds(10)).until(() -> app.events().forwardFailures.size() >= 25);
			this.proxies.publisher().restore();
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
		ProxiedApplication app = this.proxies.start(properties);
		OutboundFrames frames = app.frames();
		try {
			this.proxies.publisher().cut();
			publishFailingOnce(5);
			await().atMost(Duration.ofSeconds(10)).until(() -> app.events().forwardFailures.size() >= 5);
		}
		finally {
			app.close();
		}
		// Not left to the closing channel (which RabbitMQ 4.3 counts as a failed
		// delivery): nacked first.
		assertThat(frames.requeueingNacks()).isGreaterThanOrEqualTo(5);
		assertThat(frames.rejects()).isZero();
		await().atMost(Duration.ofSeconds(5)).until(() -> queues.broker().count(WORK) == 5);
		queues.broker().purge(WORK);
	}

	@Test
	void retryStormThroughABrokerOutageRecoversWhenTheBrokerComesBack() {
		try (ProxiedApplication app = this.proxies.startThroughTheConsumerProxy(properties())) {
			List<String> ids = publishFailingOnce(200);
			await().atMost(Duration.ofSeconds(20)).until(() -> app.deliveries().total() >= 50);

			this.proxies.consumer().cut();
			// The outage lasts until the listener's consumer has lost its connection.
			await().atMost(Duration.ofSeconds(30)).until(() -> !app.events().consumerFailures.isEmpty());
			this.proxies.consumer().restore();

			await().atMost(Duration.ofSeconds(90))
				.until(() -> ids.stream().allMatch((id) -> app.deliveries().successes(id) >= 1));
			assertThat(queues.broker().count(topology.parkingLot())).isZero();
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
		try (ProxiedApplication app = this.proxies.start(properties)) {
			this.proxies.publisher().cut();
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

			this.proxies.publisher().restore();

			await().atMost(Duration.ofSeconds(30))
				.until(() -> app.deliveries().successes(limited) == 1 && app.deliveries().successes(deadLettered) == 1);
			assertThat(app.deliveries().of(limited)).extracting(InvocationRecorder.Invocation::retryCount)
				.containsExactly(0L, 1L);
			assertThat(queues.broker().count(DEAD_LETTERS)).isZero();
			assertThat(queues.broker().count(topology.parkingLot())).isZero();
		}
	}

	private static Map<String, Object> properties() {
		return properties(topology, WORK);
	}

	private static Map<String, Object> properties(TestQueues.Topology topology, String workQueue) {
		return ProxiedApplication.forwardingProperties(topology, workQueue, "2s");
	}

	/**
	 * Publish messages to the work queue that fail until their first retry.
	 * @param count how many
	 * @return their ids
	 */
	private static List<String> publishFailingOnce(int count) {
		List<String> ids = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			ids.add(publish(WORK, "fail-until-retry:1"));
		}
		return ids;
	}

	private static String publish(String queue, String script) {
		return ScriptHeaderMessages.publish(queues.broker(), queue, script);
	}

}
