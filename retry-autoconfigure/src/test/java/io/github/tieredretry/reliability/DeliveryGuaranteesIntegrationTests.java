package io.github.tieredretry.reliability;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.headers.RetryHeaders;
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
	void forwardWhoseConfirmNeverArrivesIsMadeAgainSoTheRetryRunsTwice() {
		try (ProxiedApplication app = ProxiedApplication.start(this.consumerProxy, this.publisherProxy, properties())) {
			// The forwarding connection is open and works...
			String warmUp = publish("fail-until-retry:1", null);
			await().atMost(Duration.ofSeconds(10)).until(() -> app.deliveries().successes(warmUp) == 1);

			// ...then the network stalls on the way back: the forward reaches its tier,
			// its confirm does not.
			this.publisherProxy.freezeDownstream();
			String id = publish("fail-until-retry:1", null);
			await().atMost(Duration.ofSeconds(10))
				.pollInterval(Duration.ofMillis(10))
				.until(() -> app.events().forwardFailuresOf(id) == 1);
			// The original is held unacked; the forward is made again after the pause,
			// and confirmed.
			this.publisherProxy.thaw();

			await().atMost(Duration.ofSeconds(15)).until(() -> app.deliveries().successes(id) == 2);
			assertThat(app.events().forwardFailures).filteredOn((event) -> id.equals(event.messageId()))
				.singleElement()
				.satisfies((event) -> assertThat(event.cause()).contains("no confirm within"));
			await().during(Duration.ofSeconds(2))
				.atMost(Duration.ofSeconds(3))
				.until(() -> app.deliveries().successes(id) == 2);
			// One attempt of the original (never given back to its queue), two of the
			// retry: one copy per forward.
			assertThat(app.deliveries().of(id)).extracting(InvocationRecorder.Invocation::retryCount)
				.containsExactly(0L, 1L, 1L);
			assertThat(app.frames().requeueingNacks()).isZero();
		}
	}

	@Test
	void connectionLostBetweenTheConfirmAndTheAckRedeliversTheOriginalSoTheRetryRunsTwice() {
		try (ProxiedApplication app = ProxiedApplication.start(this.consumerProxy, this.publisherProxy, properties())) {
			String id = UUID.randomUUID().toString();
			AtomicBoolean frozen = new AtomicBoolean();
			app.deliveries().onInvocation((messageId, invocation) -> {
				if (id.equals(messageId) && frozen.compareAndSet(false, true)) {
					// From the first (failing) attempt on, nothing the consumer sends
					// reaches the broker: the forward is confirmed on the publisher
					// connection, the original's ack is held back.
					this.consumerProxy.freezeUpstream();
				}
			});
			publish(id, "fail-until-retry:1", null);
			// The retry's event is published after the original's ack was sent (into the
			// frozen connection).
			await().atMost(Duration.ofSeconds(10))
				.until(() -> app.events().scheduled.stream().anyMatch((event) -> id.equals(event.messageId())));
			// The consumer's connection dies with the ack undelivered.
			this.consumerProxy.cut();
			this.consumerProxy.thaw();
			this.consumerProxy.restore();

			await().atMost(Duration.ofSeconds(30)).until(() -> app.deliveries().successes(id) == 2);
			assertThat(app.deliveries().of(id)).extracting(InvocationRecorder.Invocation::retryCount)
				.containsExactlyInAnyOrder(0L, 0L, 1L, 1L);
			await().during(Duration.ofSeconds(2))
				.atMost(Duration.ofSeconds(3))
				.until(() -> app.deliveries().successes(id) == 2);
		}
	}

	@Test
	void retriedMessageIsOvertakenByMessagesPublishedAfterIt() {
		try (ProxiedApplication app = ProxiedApplication.start(this.consumerProxy, null, properties())) {
			String first = publish("fail-until-retry:1", null);
			String second = publish("ok", null);

			await().atMost(Duration.ofSeconds(10)).until(() -> app.deliveries().successes(first) == 1);
			assertThat(app.deliveries().firstSuccess(second)).isBefore(app.deliveries().firstSuccess(first));
		}
	}

	@Test
	void perMessageTtlShorterThanTheTierNeitherDropsNorHastensTheRetry() {
		try (ProxiedApplication app = ProxiedApplication.start(this.consumerProxy, null, properties())) {
			String id = publish("fail-until-retry:1", "50");

			await().atMost(Duration.ofSeconds(10)).until(() -> app.deliveries().successes(id) == 1);
			InvocationRecorder.Invocation retry = app.deliveries().of(id).get(1);
			assertThat(retry.properties().getExpiration()).isNull();
			assertThat(retry.header(RetryHeaders.ORIGINAL_EXPIRATION)).hasToString("50");
			assertThat(app.deliveries().gaps(id)).singleElement()
				.satisfies((gap) -> assertThat(gap).isGreaterThanOrEqualTo(topology.shortTier()));
		}
	}

	private static Map<String, Object> properties() {
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("test.work", WORK);
		properties.put("retry.parking-lot", topology.parkingLot());
		properties.put("retry.tiers", topology.tiers());
		properties.put("retry.defaults.max-retries", 2);
		properties.put("retry.defaults.delays", topology.shortTier().toMillis() + "ms");
		properties.put("retry.publish.confirm-timeout", "1s");
		properties.put("retry.publish.failure-initial-pause", "100ms");
		properties.put("retry.publish.failure-max-pause", "500ms");
		return properties;
	}

	private String publish(String script, String expiration) {
		String id = UUID.randomUUID().toString();
		publish(id, script, expiration);
		return id;
	}

	private void publish(String id, String script, String expiration) {
		AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().messageId(id)
			.deliveryMode(2)
			.contentType("text/plain")
			.expiration(expiration)
			.headers(Map.of(Script.HEADER, script))
			.build();
		this.broker.publish("", WORK, properties, "payload".getBytes(StandardCharsets.UTF_8));
	}

}
