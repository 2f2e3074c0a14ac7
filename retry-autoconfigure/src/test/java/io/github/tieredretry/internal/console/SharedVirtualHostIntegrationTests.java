package io.github.tieredretry.internal.console;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import com.jayway.jsonpath.JsonPath;
import com.rabbitmq.client.AMQP;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.ScriptHeaderMessages;
import io.github.tieredretry.testsupport.TestApplications;
import io.github.tieredretry.testsupport.TestQueues;
import io.github.tieredretry.testsupport.WorkQueueApplication;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two applications on one virtual host, each with a parking lot of its own named after
 * it: each parks, shows (console and endpoint) and replays only its own messages; a retry
 * whose queue is deleted while it waits in a tier the applications share lands in the
 * parking lot of the application that forwarded it, once. An application of this version
 * moves its messages out of the shared {@code retry.parking-lot} where earlier versions
 * parked them, and removes their binding that copied every application's unroutable
 * retries into it.
 */
class SharedVirtualHostIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("vhost");

	static final TestQueues.Topology topology = queues.topology();

	static final Application BILLING = Application.named("billing");

	static final Application SHIPPING = Application.named("shipping");

	static final Application UPGRADED = Application.named("upgraded");

	@Test
	void eachApplicationParksShowsAndReplaysOnlyItsOwnMessagesAndAnUnroutableRetryLandsOnce() {
		BrokerClient broker = queues.broker();
		long sharedBefore = sharedDepth(broker);
		try (ConfigurableApplicationContext billing = start(BILLING);
				ConfigurableApplicationContext shipping = start(SHIPPING)) {
			// Each fails once and is parked (no retries on the work queues); each doomed
			// message waits in the long tier, which both applications share.
			String billingParked = publish(broker, BILLING.work(), "fail:1");
			String shippingParked = publish(broker, SHIPPING.work(), "fail:1");
			String billingDoomed = publish(broker, BILLING.doomed(), "always");
			String shippingDoomed = publish(broker, SHIPPING.doomed(), "always");
			await().atMost(Duration.ofSeconds(20))
				.until(() -> broker.count(topology.longTierQueue()) == 2 && broker.count(BILLING.parkingLot()) == 1
						&& broker.count(SHIPPING.parkingLot()) == 1);
			// Both stop consuming their doomed queue and an operator deletes them while
			// the retries wait.
			for (ConfigurableApplicationContext application : List.of(billing, shipping)) {
				application.getBean(RabbitListenerEndpointRegistry.class)
					.getListenerContainer(WorkQueueApplication.SLOW)
					.stop();
			}
			broker.deleteQueue(BILLING.doomed());
			broker.deleteQueue(SHIPPING.doomed());
			await().atMost(topology.longTier().plusSeconds(15))
				.until(() -> broker.count(BILLING.parkingLot()) == 2 && broker.count(SHIPPING.parkingLot()) == 2);

			ConsoleClient billingClient = client(billing);
			ConsoleClient shippingClient = client(shipping);
			assertThat(parkedIds(billingClient, "/retry-console/api/messages")).containsExactlyInAnyOrder(billingParked,
					billingDoomed);
			assertThat(parkedIds(billingClient, "/actuator/retry/parking-lot")).containsExactlyInAnyOrder(billingParked,
					billingDoomed);
			assertThat(parkedIds(shippingClient, "/retry-console/api/messages"))
				.containsExactlyInAnyOrder(shippingParked, shippingDoomed);
			assertThat(parkedIds(shippingClient, "/actuator/retry/parking-lot"))
				.containsExactlyInAnyOrder(shippingParked, shippingDoomed);
			assertThat(JsonPath.<String>read(billingClient.send(billingClient.request("/actuator/retry")).body(),
					"$.parkingLot.queue"))
				.isEqualTo(BILLING.parkingLot());

			// Each replays all it has: its own message goes back to its own queue (the
			// doomed one, whose queue is gone, stays parked).
			replayAll(billingClient);
			replayAll(shippingClient);
			await().atMost(Duration.ofSeconds(20))
				.until(() -> recorder(billing).successes(billingParked) == 1
						&& recorder(shipping).successes(shippingParked) == 1);
			assertThat(recorder(billing).count(shippingParked)).isZero();
			assertThat(recorder(shipping).count(billingParked)).isZero();
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
				assertThat(parkedIds(billingClient, "/actuator/retry/parking-lot")).containsExactly(billingDoomed);
				assertThat(parkedIds(shippingClient, "/actuator/retry/parking-lot")).containsExactly(shippingDoomed);
			});
			assertThat(recorder(billing).count(billingParked)).isEqualTo(2);
		}
		// Nothing went to the shared parking lot: every retry named the one it belongs
		// in.
		assertThat(sharedDepth(broker)).isEqualTo(sharedBefore);
	}

	@Test
	void messagesParkedInTheSharedParkingLotByAnEarlierVersionMoveToTheirApplicationsOwn() {
		BrokerClient broker = queues.broker();
		// As an earlier version left things: the shared parking lot bound straight to
		// retry.unroutable, holding the parked messages of every application.
		broker.declareFanout(RetryTopology.UNROUTABLE_EXCHANGE);
		if (!broker.queueExists(RetryTopology.SHARED_PARKING_LOT)) {
			broker.declareQueue(RetryTopology.SHARED_PARKING_LOT,
					Map.of("x-queue-type", "quorum", "x-delivery-limit", Integer.MAX_VALUE));
		}
		broker.bind(RetryTopology.SHARED_PARKING_LOT, RetryTopology.UNROUTABLE_EXCHANGE);
		String ours = "ours-" + UUID.randomUUID();
		String theirs = "theirs-" + UUID.randomUUID();
		String nobodys = "nobodys-" + UUID.randomUUID();
		AMQP.BasicProperties oursSent = parked(ours, UPGRADED.work());
		byte[] body = { 0, (byte) 0xff, 'o', 'r', 'd', 'e', 'r' };
		broker.publish("", RetryTopology.SHARED_PARKING_LOT, oursSent, body);
		broker.publish("", RetryTopology.SHARED_PARKING_LOT, parked(theirs, queues.name("someone-elses")), body);
		broker.publish("", RetryTopology.SHARED_PARKING_LOT, parked(nobodys, null), body);

		try (ConfigurableApplicationContext upgraded = start(UPGRADED)) {
			await().atMost(Duration.ofSeconds(20)).until(() -> broker.count(UPGRADED.parkingLot()) == 1);
			BrokerClient.Received moved = broker.drain(UPGRADED.parkingLot()).get(0);
			assertThat(moved.body()).isEqualTo(body);
			assertThat(moved.properties().getMessageId()).isEqualTo(ours);
			assertThat(moved.properties().getContentType()).isEqualTo(oursSent.getContentType());
			assertThat(moved.properties().getCorrelationId()).isEqualTo(oursSent.getCorrelationId());
			assertThat(moved.properties().getPriority()).isEqualTo(oursSent.getPriority());
			assertThat(moved.properties().getTimestamp()).isEqualTo(oursSent.getTimestamp());
			assertThat(moved.header(RetryHeaders.QUEUE)).isEqualTo(UPGRADED.work());
			assertThat(moved.header(RetryHeaders.PARKED_REASON)).isEqualTo("exhausted");
			assertThat(moved.header("order")).isEqualTo("42");

			// The binding that copied every unroutable retry into the shared parking lot
			// is gone: one that names this application's parking lot lands there only,
			// and one that names none (forwarded by an earlier version) in the shared
			// one.
			String named = "named-" + UUID.randomUUID();
			String unnamed = "unnamed-" + UUID.randomUUID();
			broker.publish(RetryTopology.UNROUTABLE_EXCHANGE, UPGRADED.doomed(),
					new AMQP.BasicProperties.Builder().messageId(named)
						.headers(Map.of(RetryHeaders.PARKING_LOT, UPGRADED.parkingLot()))
						.build(),
					body);
			broker.publish(RetryTopology.UNROUTABLE_EXCHANGE, UPGRADED.doomed(),
					new AMQP.BasicProperties.Builder().messageId(unnamed).build(), body);
			await().atMost(Duration.ofSeconds(10)).until(() -> broker.count(UPGRADED.parkingLot()) == 1);
			assertThat(broker.drain(UPGRADED.parkingLot())).extracting((message) -> message.properties().getMessageId())
				.containsExactly(named);
			assertThat(takeFromShared(broker, Set.of(theirs, nobodys, unnamed))).contains(theirs, nobodys, unnamed)
				.doesNotContain(ours, named);
		}
	}

	private static ConfigurableApplicationContext start(Application application) {
		Map<String, Object> properties = TestApplications.brokerProperties();
		properties.put("spring.application.name", application.name());
		properties.put("server.port", "0");
		properties.put("retry.console.enabled", "true");
		properties.put("management.endpoints.web.exposure.include", "retry");
		properties.put("test.work", application.work());
		properties.put("test.slow", application.doomed());
		properties.put("retry.tiers", topology.tiers());
		properties.put("retry.defaults.max-retries", "0");
		properties.put("retry.policies.slow.max-retries", "2");
		properties.put("retry.policies.slow.delays", topology.longTier().toMillis() + "ms");
		return TestApplications.run(WorkQueueApplication.class, properties);
	}

	private static ConsoleClient client(ConfigurableApplicationContext application) {
		return new ConsoleClient(
				Integer.parseInt(application.getEnvironment().getRequiredProperty("local.server.port")));
	}

	private static List<String> parkedIds(ConsoleClient client, String path) {
		HttpResponse<String> response = client.send(client.request(path + "?limit=50"));
		assertThat(response.statusCode()).as(path).isEqualTo(200);
		return JsonPath.read(response.body(), "$.messages[*].messageId");
	}

	private static void replayAll(ConsoleClient client) {
		HttpResponse<String> replay = client.send(client.request("/actuator/retry/parking-lot/replay")
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{}")));
		assertThat(replay.statusCode()).as(replay.body()).isBetween(200, 202);
	}

	private static InvocationRecorder recorder(ConfigurableApplicationContext application) {
		return application.getBean(InvocationRecorder.class);
	}

	private static String publish(BrokerClient broker, String queue, String script) {
		return ScriptHeaderMessages.publish(broker, queue, script);
	}

	private static AMQP.BasicProperties parked(String id, String queue) {
		Map<String, Object> headers = new LinkedHashMap<>();
		if (queue != null) {
			headers.put(RetryHeaders.QUEUE, queue);
		}
		headers.put(RetryHeaders.PARKED_REASON, "exhausted");
		headers.put("order", 42);
		return new AMQP.BasicProperties.Builder().messageId(id)
			.contentType("application/octet-stream")
			.correlationId("correlation-" + id)
			.priority(3)
			.timestamp(new Date(1_700_000_000_000L))
			.deliveryMode(2)
			.headers(headers)
			.build();
	}

	private static long sharedDepth(BrokerClient broker) {
		return broker.queueExists(RetryTopology.SHARED_PARKING_LOT) ? broker.count(RetryTopology.SHARED_PARKING_LOT)
				: 0;
	}

	// The ids in the shared parking lot; the given ones are taken out of it, the others
	// given back.
	private static List<String> takeFromShared(BrokerClient broker, Set<String> taken) {
		List<BrokerClient.Received> all = broker.drain(RetryTopology.SHARED_PARKING_LOT);
		for (BrokerClient.Received message : all) {
			if (!taken.contains(message.properties().getMessageId())) {
				broker.publish("", RetryTopology.SHARED_PARKING_LOT, message.properties(), message.body());
			}
		}
		return all.stream().map((message) -> message.properties().getMessageId()).toList();
	}

	/**
	 * One of the applications: its name, its queues, and the parking lot named after it.
	 *
	 * @param name its {@code spring.application.name}
	 * @param work the queue of its listener without retries
	 * @param doomed the queue of its listener that retries slowly, deleted while its
	 * retries wait
	 * @param parkingLot its parking lot
	 */
	record Application(String name, String work, String doomed, String parkingLot) {

		static Application named(String role) {
			String name = role + "-" + queues.id();
			return new Application(name, queues.name(role + "-work"), queues.name(role + "-doomed"),
					queues.owned(RetryTopology.SHARED_PARKING_LOT + "." + name));
		}

	}

}
