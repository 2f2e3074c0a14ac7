package io.github.tieredretry.internal.actuate;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.jayway.jsonpath.DocumentContext;
import com.jayway.jsonpath.JsonPath;
import com.rabbitmq.client.AMQP;
import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.parkinglot.StayReason;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.Messages;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.Script;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code retry} endpoint, the {@code retry} health indicator and the retry metrics
 * over real HTTP, in an application running against the real broker.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@RabbitIntegrationTest
class RetryEndpointWebIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("endpoint");

	static final String ORDERS = queues.name("orders");

	static final String PAYMENTS = queues.name("payments");

	/** Never declared: the origin queue of a parked message whose queue is gone. */
	static final String GONE = queues.name("gone");

	static final String PARKING_LOT = queues.parkingLotName();

	/**
	 * Fails as not retryable (parked at once) until the message comes back from the
	 * parking lot.
	 */
	static final String REJECT_UNTIL_REPLAYED = "reject-until-replayed";

	static {
		queues.settings((settings) -> settings.classicTiers("200ms, 500ms")
			.set("retry.defaults.max-retries", 2)
			.set("test.orders", ORDERS)
			.set("test.payments", PAYMENTS)
			.set("retry.policies.payments.max-retries", "3")
			.set("retry.policies.payments.initial-interval", "200ms")
			.set("retry.policies.payments.multiplier", "2.0")
			.set("retry.policies.payments.max-interval", "500ms")
			.set("retry.policies.payments.jitter", "0.2")
			.set("management.endpoints.web.exposure.include", "health,metrics,prometheus,retry")
			.set("management.endpoint.health.show-details", "always")
			// As the Grafana dashboard's p95 panel expects.
			.set("management.metrics.distribution.percentiles-histogram.rabbitmq.retry.recovery", "true"));
	}

	@LocalServerPort
	int port;

	@Autowired
	InvocationRecorder recorder;

	BrokerClient broker;

	final HttpClient http = HttpClient.newHttpClient();

	@BeforeEach
	void setUp() {
		this.broker = new BrokerClient();
		this.broker.purge(PARKING_LOT);
	}

	@AfterEach
	void closeClient() {
		this.broker.close();
	}

	@Test
	void overviewDescribesTiersParkingLotAndListeners() {
		park(ORDERS, "reject");

		Response response = get("/actuator/retry");

		assertThat(response.status()).isEqualTo(200);
		DocumentContext json = response.json();
		assertThat(json.read("$.queueType", String.class)).isEqualTo("classic");
		assertThat(json.read("$.tiers[*].name", List.class)).containsExactly("200ms", "500ms");
		assertThat(json.read("$.tiers[0].ttlMillis", Long.class)).isEqualTo(200);
		assertThat(json.read("$.tiers[0].queue", String.class)).isEqualTo("retry.delay.200ms");
		assertThat(json.read("$.tiers[0].depth", Long.class)).isNotNull();
		assertThat(json.read("$.tiers[*].scheduled", List.class)).as("delayed sends waiting per tier")
			.containsExactly(0, 0);
		assertThat(json.read("$.parkingLot.queue", String.class)).isEqualTo(PARKING_LOT);
		assertThat(json.read("$.parkingLot.depth", Long.class)).isEqualTo(1);
		assertThat(json.read("$.missingQueues", List.class)).isEmpty();
		assertThat(json.read("$.depthsReadAt", String.class)).isNotBlank();
		Map<String, Object> orders = listenerOn(json, ORDERS);
		assertThat(orders.get("listener")).asString().endsWith("Listeners#onOrder");
		assertThat(orders.get("policy")).isNull();
		assertThat(JsonPath.parse(orders).read("$.effectivePolicy.maxRetries", Integer.class)).isEqualTo(2);
		assertThat(JsonPath.parse(orders).read("$.effectivePolicy.delays", List.class)).containsExactly("200ms",
				"500ms");
		assertThat(JsonPath.parse(orders).read("$.effectivePolicy.noRetryOn", List.class))
			.containsExactly(IllegalArgumentException.class.getName());
		assertThat(JsonPath.parse(orders).read("$.effectivePolicy", Map.class)).as("null fields are left out")
			.doesNotContainKey("exponential")
			.as("exact delays have no jitter")
			.doesNotContainKey("jitter");
		Map<String, Object> payments = listenerOn(json, PAYMENTS);
		assertThat(payments.get("policy")).isEqualTo("payments");
		DocumentContext paymentsPolicy = JsonPath.parse(payments);
		assertThat(paymentsPolicy.read("$.effectivePolicy.delays", List.class)).containsExactly("200ms", "400ms",
				"500ms");
		assertThat(paymentsPolicy.read("$.effectivePolicy.exponential.initialInterval", String.class))
			.isEqualTo("200ms");
		assertThat(paymentsPolicy.read("$.effectivePolicy.exponential.multiplier", Double.class)).isEqualTo(2.0);
		assertThat(paymentsPolicy.read("$.effectivePolicy.exponential.maxInterval", String.class)).isEqualTo("500ms");
		assertThat(paymentsPolicy.read("$.effectivePolicy.jitter", Double.class)).isEqualTo(0.2);
	}

	@Test
	void peekShowsTheOldestParkedMessagesAndLeavesTheParkingLotAsItWas() {
		String first = park(ORDERS, "reject");
		String second = park(ORDERS, "reject");
		park(PAYMENTS, "reject");
		park(ORDERS, "reject");

		Response response = get("/actuator/retry/parking-lot?limit=2&queue=" + ORDERS);

		assertThat(response.status()).isEqualTo(200);
		DocumentContext json = response.json();
		assertThat(json.read("$.parkingLot", String.class)).isEqualTo(PARKING_LOT);
		assertThat(json.read("$.depth", Long.class)).isEqualTo(4);
		assertThat(json.read("$.messages[*].messageId", List.class)).containsExactly(first, second);
		Map<String, Object> message = json.read("$.messages[0]");
		assertThat(message).containsEntry("originQueue", ORDERS)
			.containsEntry("retryCount", 0)
			.containsEntry("parkedReason", "not-retryable")
			.containsEntry("exception", IllegalArgumentException.class.getName())
			.containsEntry("error", "scripted rejection")
			.containsEntry("contentType", "text/plain")
			.containsEntry("bodyPreview", "reject")
			.containsEntry("bodySize", 6)
			.containsKeys("firstFailure", "parkedAt", "replays");
		assertThat(message.get("parkedAt").toString()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
		assertThat(this.broker.count(PARKING_LOT)).as("peek takes nothing away").isEqualTo(4);
		assertThat(get("/actuator/retry/parking-lot").json().read("$.messages", List.class)).hasSize(4);
	}

	@Test
	void replayMovesExactlyTheFilteredMessagesInTheBackgroundAndTheyAreProcessed() {
		String firstOrder = park(ORDERS, REJECT_UNTIL_REPLAYED);
		String payment = park(PAYMENTS, "reject");
		String secondOrder = park(ORDERS, REJECT_UNTIL_REPLAYED);

		Response started = post("/actuator/retry/parking-lot/replay", Map.of("queue", ORDERS));

		assertThat(started.status()).isEqualTo(202);
		assertThat(started.json().read("$.id", String.class)).isNotBlank();
		assertThat(started.json().read("$.filter.queue", String.class)).isEqualTo(ORDERS);
		DocumentContext json = replayOutcome();
		assertThat(json.read("$.state", String.class)).isEqualTo("finished");
		assertThat(json.read("$.moved", Integer.class)).isEqualTo(2);
		assertThat(json.read("$.stayed", Integer.class)).isZero();
		assertThat(json.read("$.stayedByReason", Map.class)).isEmpty();
		await().atMost(Duration.ofSeconds(10))
			.until(() -> this.recorder.succeeded(firstOrder) && this.recorder.succeeded(secondOrder));
		assertThat(this.recorder.of(firstOrder)).extracting(InvocationRecorder.Invocation::retryCount)
			.as("a fresh retry cycle")
			.containsExactly(0L, 0L);
		assertThat(parkedIds()).containsExactly(payment);
	}

	@Test
	void replayWithALimitMovesOnlyThatMany() {
		String first = park(ORDERS, REJECT_UNTIL_REPLAYED);
		String second = park(ORDERS, REJECT_UNTIL_REPLAYED);

		post("/actuator/retry/parking-lot/replay", Map.of("queue", ORDERS, "limit", 1));

		assertThat(replayOutcome().read("$.moved", Integer.class)).isEqualTo(1);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(first));
		assertThat(parkedIds()).containsExactly(second);
	}

	@Test
	void replayWithoutBodyAndWithoutContentTypeReplaysEverything() {
		String orphan = parkDirectly(GONE);

		Response started = send(HttpRequest.newBuilder(uri("/actuator/retry/parking-lot/replay"))
			.POST(HttpRequest.BodyPublishers.noBody()));

		assertThat(started.status()).as(started.body()).isEqualTo(202);
		assertThat(replayOutcome().read("$.stayedMessages[0].messageId", String.class)).isEqualTo(orphan);
		assertThat(parkedIds()).containsExactly(orphan);
	}

	@Test
	void replayOfAMessageWhoseOriginQueueNoLongerExistsKeepsItParked() {
		String orphan = parkDirectly(GONE);

		post("/actuator/retry/parking-lot/replay?queue=" + GONE, null);

		DocumentContext json = replayOutcome();
		assertThat(json.read("$.moved", Integer.class)).isZero();
		assertThat(json.read("$.stayed", Integer.class)).isEqualTo(1);
		assertThat(json.read("$.stayedByReason." + StayReason.ORIGIN_QUEUE_MISSING.value(), Integer.class))
			.isEqualTo(1);
		assertThat(json.read("$.stayedMessages[0].messageId", String.class)).isEqualTo(orphan);
		assertThat(json.read("$.stayedMessages[0].originQueue", String.class)).isEqualTo(GONE);
		assertThat(json.read("$.stayedMessages[0].reason", String.class)).isEqualTo("origin-queue-missing");
		assertThat(parkedIds()).containsExactly(orphan);
	}

	@Test
	void groupsAndDryRunsShowWhatFailedAndWhatAReplayOrPurgeWouldDo() {
		String first = park(ORDERS, "reject");
		park(ORDERS, "reject");
		park(PAYMENTS, "reject");

		DocumentContext groups = get("/actuator/retry/parking-lot/groups").json();
		assertThat(groups.read("$.partial", Boolean.class)).isFalse();
		assertThat(groups.read("$.groups[*].count", List.class)).containsExactly(2, 1);
		assertThat(groups.read("$.groups[0].originQueue", String.class)).isEqualTo(ORDERS);
		assertThat(groups.read("$.groups[0].sampleMessageId", String.class)).isEqualTo(first);
		String group = groups.read("$.groups[0].id", String.class);

		Response replayPreview = post("/actuator/retry/parking-lot/replay", Map.of("group", group, "dryRun", true));
		assertThat(replayPreview.status()).isEqualTo(200);
		assertThat(replayPreview.json().read("$.wouldMove", Integer.class)).isEqualTo(2);
		Response purgePreview = delete("/actuator/retry/parking-lot?dryRun=true&exception=IllegalArgumentException");
		assertThat(purgePreview.json().read("$.matched", Integer.class)).isEqualTo(3);
		assertThat(purgePreview.json().read("$.purged", Integer.class)).isZero();
		assertThat(get("/actuator/retry/parking-lot?group=" + group).json().read("$.messages", List.class)).hasSize(2);
		assertThat(this.broker.count(PARKING_LOT)).as("dry runs move nothing").isEqualTo(3);
	}

	@Test
	void purgeByOriginRemovesOnlyThatOriginsMessages() {
		String order = park(ORDERS, "reject");
		park(PAYMENTS, "reject");
		park(PAYMENTS, "reject");

		Response response = delete("/actuator/retry/parking-lot?queue=" + PAYMENTS);

		assertThat(response.status()).isEqualTo(200);
		assertThat(response.json().read("$.purged", Long.class)).isEqualTo(2);
		assertThat(response.json().read("$.dryRun", Boolean.class)).isFalse();
		assertThat(parkedIds()).containsExactly(order);
	}

	@Test
	void aPurgeOfEverythingMustSaySo() {
		park(ORDERS, "reject");

		Response refused = delete("/actuator/retry/parking-lot");
		assertThat(refused.status()).isEqualTo(400);
		assertThat(refused.json().read("$.message", String.class)).contains("all=true");
		assertThat(this.broker.count(PARKING_LOT)).isEqualTo(1);

		assertThat(delete("/actuator/retry/parking-lot?all=true").json().read("$.purged", Long.class)).isEqualTo(1);
		assertThat(this.broker.count(PARKING_LOT)).isZero();
	}

	@Test
	void unknownResourcesAnswer404AndInvalidParameters400WithTheReasonInTheBody() {
		assertNotFound(get("/actuator/retry/elsewhere"));
		assertNotFound(get("/actuator/retry/parking-lot/elsewhere"));
		assertNotFound(post("/actuator/retry/parking-lot/requeue", Map.of()));
		assertNotFound(post("/actuator/retry/elsewhere/replay", Map.of()));
		assertNotFound(delete("/actuator/retry/elsewhere"));
		assertBadRequest(get("/actuator/retry/parking-lot?limit=0"), "limit must be between 1 and 200 but was 0");
		assertBadRequest(get("/actuator/retry/parking-lot?limit=500"), "limit must be between 1 and 200 but was 500");
		assertBadRequest(get("/actuator/retry/parking-lot?limit=many"), "limit must be a whole number but was 'many'");
		assertBadRequest(get("/actuator/retry/parking-lot/groups?reason=tired"), "reason must be one of");
		assertBadRequest(get("/actuator/retry/parking-lot?parkedAfter=yesterday"), "ISO-8601");
		assertBadRequest(post("/actuator/retry/parking-lot/replay", Map.of("limit", 0)), "limit must be at least 1");
	}

	private void assertNotFound(Response response) {
		assertThat(response.status()).as(response.body()).isEqualTo(404);
		assertThat(response.json().read("$.message", String.class)).startsWith("No resource '");
	}

	private void assertBadRequest(Response response, String reason) {
		assertThat(response.status()).as(response.body()).isEqualTo(400);
		assertThat(response.json().read("$.message", String.class)).contains(reason);
	}

	private DocumentContext replayOutcome() {
		await().atMost(Duration.ofSeconds(20))
			.until(() -> !"running".equals(get("/actuator/retry/parking-lot/replay").json().read("$.state")));
		return get("/actuator/retry/parking-lot/replay").json();
	}

	@Test
	void healthIsUpWithTheDepthsInItsDetails() {
		Response response = get("/actuator/health/retry");

		assertThat(response.status()).isEqualTo(200);
		DocumentContext json = response.json();
		assertThat(json.read("$.status", String.class)).isEqualTo("UP");
		assertThat(json.read("$.details.tiers", Map.class)).containsOnlyKeys("retry.delay.200ms", "retry.delay.500ms");
		assertThat(json.read("$.details.parkingLot.queue", String.class)).isEqualTo(PARKING_LOT);
		assertThat(json.read("$.details.parkingLot.depth", Long.class)).isNotNull();
	}

	@Test
	void metricsAreVisibleInTheMetricsEndpointAndInPrometheusFormat() {
		park(ORDERS, "reject");
		String recovering = Messages.publish(this.broker, "", ORDERS, "fail:1");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.succeeded(recovering));

		Response metric = get("/actuator/metrics/rabbitmq.retry.messages?tag=queue:" + ORDERS + "&tag=outcome:parked");
		assertThat(metric.status()).isEqualTo(200);
		assertThat(metric.json().read("$.description", String.class)).isNotBlank();
		assertThat(metric.json().read("$.measurements[0].value", Double.class)).isPositive();
		assertThat(metric.json().read("$.availableTags[*].tag", List.class)).contains("tier", "reason", "exception");

		// The series the Grafana dashboard queries.
		String queue = "queue=\"" + ORDERS + "\"";
		await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
			String prometheus = get("/actuator/prometheus").body();
			assertThat(prometheus).contains("# HELP rabbitmq_retry_messages_total ")
				.contains("rabbitmq_retry_messages_total{exception=\"IllegalArgumentException\",outcome=\"parked\","
						+ queue + ",reason=\"not-retryable\",tier=\"none\"}")
				.contains("rabbitmq_retry_messages_total{exception=\"IllegalStateException\",outcome=\"retried\","
						+ queue + ",reason=\"none\",tier=\"200ms\"}")
				.contains("rabbitmq_retry_messages_total{exception=\"IllegalStateException\",outcome=\"recovered\","
						+ queue + ",reason=\"none\",tier=\"none\"}")
				.contains("rabbitmq_retry_recovery_seconds_count{" + queue + "}")
				.contains("rabbitmq_retry_recovery_seconds_sum{" + queue + "}")
				.contains("rabbitmq_retry_recovery_seconds_max{" + queue + "}")
				.contains("rabbitmq_retry_recovery_seconds_bucket{" + queue + ",le=")
				.contains("rabbitmq_retry_depth_messages{queue=\"retry.delay.200ms\",type=\"tier\"}")
				.contains("rabbitmq_retry_depth_messages{queue=\"" + PARKING_LOT + "\",type=\"parking-lot\"}");
		});
	}

	private String park(String queue, String script) {
		String id = Messages.publish(this.broker, "", queue, script);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.recorder.count(id) > 0);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.broker.count(PARKING_LOT) > 0 && isParked(id));
		return id;
	}

	private boolean isParked(String id) {
		Response peek = get("/actuator/retry/parking-lot?limit=200");
		List<String> ids = peek.json().read("$.messages[*].messageId");
		return ids.contains(id);
	}

	private String parkDirectly(String origin) {
		String id = "orphan-" + UUID.randomUUID();
		Map<String, Object> headers = new LinkedHashMap<>();
		headers.put(RetryHeaders.QUEUE, origin);
		headers.put(RetryHeaders.COUNT, 2L);
		AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().messageId(id)
			.deliveryMode(2)
			.headers(headers)
			.build();
		this.broker.publish("", PARKING_LOT, properties, "orphan".getBytes(StandardCharsets.UTF_8));
		return id;
	}

	private List<String> parkedIds() {
		return this.broker.drain(PARKING_LOT).stream().map((message) -> message.properties().getMessageId()).toList();
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> listenerOn(DocumentContext json, String queue) {
		List<Map<String, Object>> listeners = json.read("$.listeners");
		return listeners.stream()
			.filter((listener) -> ((List<String>) listener.get("queues")).contains(queue))
			.findFirst()
			.orElseThrow();
	}

	private Response get(String path) {
		return send(HttpRequest.newBuilder(uri(path)).GET());
	}

	private Response post(String path, Map<String, Object> body) {
		// Like curl -X POST -H 'Content-Type: application/json' [-d '{...}']: write
		// operations consume JSON.
		String json = (body != null) ? JsonPath.parse(body).jsonString() : "";
		return send(HttpRequest.newBuilder(uri(path))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json)));
	}

	private Response delete(String path) {
		return send(HttpRequest.newBuilder(uri(path)).DELETE());
	}

	private URI uri(String path) {
		return URI.create("http://localhost:" + this.port + path);
	}

	private Response send(HttpRequest.Builder request) {
		try {
			HttpResponse<String> response = this.http.send(request.timeout(Duration.ofSeconds(30)).build(),
					HttpResponse.BodyHandlers.ofString());
			return new Response(response.statusCode(), response.body());
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	record Response(int status, String body) {

		DocumentContext json() {
			return JsonPath.parse(this.body);
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@Bean
		InvocationRecorder invocationRecorder() {
			return new InvocationRecorder();
		}

		@Bean
		Declarables queues() {
			return new Declarables(new Queue(ORDERS), new Queue(PAYMENTS));
		}

		@Bean
		Listeners listeners(InvocationRecorder recorder) {
			return new Listeners(recorder);
		}

	}

	static class Listeners {

		private final InvocationRecorder recorder;

		Listeners(InvocationRecorder recorder) {
			this.recorder = recorder;
		}

		@RabbitListener(queues = "${test.orders}")
		@RetryableListener(delays = { "200ms", "500ms" }, noRetryOn = IllegalArgumentException.class)
		void onOrder(Message message) {
			run(message);
		}

		@RabbitListener(queues = "${test.payments}")
		@RetryableListener(policy = "payments", noRetryOn = IllegalArgumentException.class)
		void onPayment(Message message) {
			run(message);
		}

		private void run(Message message) {
			String script = new String(message.getBody(), StandardCharsets.UTF_8);
			if (script.equals(REJECT_UNTIL_REPLAYED)) {
				boolean replayed = message.getMessageProperties().getHeader(RetryHeaders.REPLAY_COUNT) != null;
				this.recorder.record(message.getMessageProperties().getMessageId(),
						message.getMessageProperties().getRetryCount(), replayed);
				if (!replayed) {
					throw new IllegalArgumentException("rejected until replayed");
				}
				return;
			}
			Script.run(message, this.recorder);
		}

	}

}
