package io.github.tieredretry.reliability;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.ScriptHeaderMessages;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What a listener can rely on: every message at least once; a second copy only in the two
 * windows where the starter cannot know whether the broker has its forward (a confirm
 * that never arrives, a connection lost between the confirm and the ack); retries
 * overtaken by later messages; a per-message TTL that never cuts a retry short.
 */
class DeliveryGuaranteesIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("guarantees");

	static final TestQueues.Topology topology = queues.topology();

	static final String WORK = queues.name("work");

	@RegisterExtension
	final BrokerProxies proxies = new BrokerProxies();

	@Test
	void forwardWhoseConfirmNeverArrivesIsMadeAgainSoTheRetryRunsTwice() {
		try (ProxiedApplication app = this.proxies.start(properties())) {
			// The forwarding connection is open and works...
			String warmUp = publish("fail-until-retry:1", null);
			await().atMost(Duration.ofSeconds(10)).until(() -> app.deliveries().successes(warmUp) == 1);

			// ...then the network stalls on the way back: the forward reaches its tier,
			// its confirm does not.
			this.proxies.publisher().freezeDownstream();
			String id = publish("fail-until-retry:1", null);
			await().atMost(Duration.ofSeconds(10))
				.pollInterval(Duration.ofMillis(10))
				.until(() -> app.events().forwardFailuresOf(id) == 1);
			// The original is held unacked; the forward is made again after the pause,
			// and confirmed.
			this.proxies.publisher().thaw();

			await().atMost(Duration.ofSeconds(15)).until(() -> app.deliveries().successes(id) == 2);
			assertThat(app.events().forwardFailures).filteredOn((event) -> id.equals(event.messageId()))
				.singleElement()
				.satisfies((event) -> assertThat(event.cause()).contains("no confirm within"));
			awaitALaterMessageThroughTheSameTier(app);
			assertThat(app.deliveries().successes(id)).isEqualTo(2);
			// One attempt of the original (never given back to its queue), two of the
			// retry: one copy per forward.
			assertThat(app.deliveries().of(id)).extracting(InvocationRecorder.Invocation::retryCount)
				.containsExactly(0L, 1L, 1L);
			assertThat(app.frames().requeueingNacks()).isZero();
		}
	}

	@Test
	void connectionLostBetweenTheConfirmAndTheAckRedeliversTheOriginalSoTheRetryRunsTwice() {
		try (ProxiedApplication app = this.proxies.start(properties())) {
			String id = UUID.randomUUID().toString();
			AtomicBoolean frozen = new AtomicBoolean();
			app.deliveries().onInvocation((messageId, invocation) -> {
				if (id.equals(messageId) && frozen.compareAndSet(false, true)) {
					// From the first (failing) attempt on, nothing the consumer sends
					// reaches the broker: the forward is confirmed on the publisher
					// connection, the original's ack is held back.
					this.proxies.consumer().freezeUpstream();
				}
			});
			ScriptHeaderMessages.publish(queues.broker(), WORK, id, "fail-until-retry:1", null);
			// The retry's event is published after the original's ack was sent (into the
			// frozen connection).
			await().atMost(Duration.ofSeconds(10))
				.until(() -> app.events().scheduled.stream().anyMatch((event) -> id.equals(event.messageId())));
			// The consumer's connection dies with the ack undelivered.
			this.proxies.consumer().cut();
			this.proxies.consumer().thaw();
			this.proxies.consumer().restore();

			await().atMost(Duration.ofSeconds(30)).until(() -> app.deliveries().successes(id) == 2);
			assertThat(app.deliveries().of(id)).extracting(InvocationRecorder.Invocation::retryCount)
				.containsExactlyInAnyOrder(0L, 0L, 1L, 1L);
			awaitALaterMessageThroughTheSameTier(app);
			assertThat(app.deliveries().successes(id)).isEqualTo(2);
		}
	}

	@Test
	void retriedMessageIsOvertakenByMessagesPublishedAfterIt() {
		try (ProxiedApplication app = this.proxies.startThroughTheConsumerProxy(properties())) {
			String first = publish("fail-until-retry:1", null);
			String second = publish("ok", null);

			await().atMost(Duration.ofSeconds(10)).until(() -> app.deliveries().successes(first) == 1);
			assertThat(app.deliveries().firstSuccess(second)).isBefore(app.deliveries().firstSuccess(first));
		}
	}

	@Test
	void perMessageTtlShorterThanTheTierNeitherDropsNorHastensTheRetry() {
		try (ProxiedApplication app = this.proxies.startThroughTheConsumerProxy(properties())) {
			String id = publish("fail-until-retry:1", "50");

			await().atMost(Duration.ofSeconds(10)).until(() -> app.deliveries().successes(id) == 1);
			InvocationRecorder.Invocation retry = app.deliveries().of(id).get(1);
			assertThat(retry.properties().getExpiration()).isNull();
			assertThat(retry.header(RetryHeaders.ORIGINAL_EXPIRATION)).hasToString("50");
			assertThat(app.deliveries().gaps(id)).singleElement()
				.satisfies((gap) -> assertThat(gap).isGreaterThanOrEqualTo(topology.shortTier()));
		}
	}

	/**
	 * Publish a message that fails once and wait for its retry: it takes the path of the
	 * earlier message (work queue, forward, tier, work queue) after it, so once it is
	 * through, a stray copy of the earlier message would have arrived too.
	 */
	private static void awaitALaterMessageThroughTheSameTier(ProxiedApplication app) {
		String later = publish("fail-until-retry:1", null);
		await().atMost(Duration.ofSeconds(15)).until(() -> app.deliveries().successes(later) == 1);
	}

	private static Map<String, Object> properties() {
		return ProxiedApplication.forwardingProperties(topology, WORK, "1s");
	}

	private static String publish(String script, String expiration) {
		return ScriptHeaderMessages.publish(queues.broker(), WORK, script, expiration);
	}

}
