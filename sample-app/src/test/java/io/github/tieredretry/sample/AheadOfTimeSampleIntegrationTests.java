package io.github.tieredretry.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.jayway.jsonpath.JsonPath;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sample as an application built with Spring AOT runs it: processed ahead of time by
 * the build ({@code process-aot}), packaged as an executable jar holding the generated
 * code, and started from that jar with {@code -Dspring.aot.enabled=true}, in a JVM of its
 * own (the same Java as the tests). Its demo's orders fail, are retried through the tiers
 * and parked; a parked order is replayed once the payment provider is healed and is paid;
 * the endpoint and the console answer. The build's hints for a native image (the
 * exception class the sample's policy names, the console's files) are in the generated
 * metadata.
 * <p>
 * What this does not cover: a native image (no GraalVM on the build machines), so
 * reflection and resources missing from the hints would only fail there; and properties
 * that decide which beans exist are fixed at build time, as AOT fixes them (the arguments
 * below change only values).
 */
class AheadOfTimeSampleIntegrationTests {

	static final String ORDERS = "aot-test.orders";

	static final String PARKING_LOT = "aot-test.parking-lot";

	static final List<String> TIERS = List.of("211ms", "419ms");

	static final Pattern PORT = Pattern.compile("Tomcat started on port (\\d+)");

	static final Pattern RUN = Pattern
		.compile("demo orders and 1 malformed payload to '" + ORDERS + "' \\(run (\\w+)\\)");

	static final Path LOG = Path.of("target", "aot-sample.log").toAbsolutePath();

	static Process application;

	static final HttpClient http = HttpClient.newHttpClient();

	static String base;

	static String run;

	@BeforeAll
	static void startTheAotProcessedJar() throws IOException {
		Path jar = Path.of(System.getProperty("sample.aot-jar", "target/tiered-retry-sample-app-0.1.0-SNAPSHOT.jar"));
		assertThat(jar).as("the sample's executable jar, built by ./mvnw verify (package phase)").exists();
		String java = ProcessHandle.current().info().command().orElse("java");
		List<String> command = new ArrayList<>(List.of(java, "-Dspring.aot.enabled=true", "-jar", jar.toString(),
				"--server.port=0", "--spring.rabbitmq.host=" + System.getProperty("spring.rabbitmq.host", "localhost"),
				"--spring.rabbitmq.port=" + System.getProperty("spring.rabbitmq.port", "5672"),
				"--spring.rabbitmq.username=" + System.getProperty("spring.rabbitmq.username", "guest"),
				"--spring.rabbitmq.password=" + System.getProperty("spring.rabbitmq.password", "guest"),
				"--sample.orders-queue=" + ORDERS, "--retry.parking-lot=" + PARKING_LOT,
				"--retry.tiers=" + String.join(",", TIERS),
				"--retry.policies.payments.delays=" + String.join(",", TIERS),
				"--logging.level.io.github.tieredretry=info"));
		Files.deleteIfExists(LOG);
		application = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(LOG.toFile()).start();
		await().atMost(Duration.ofSeconds(90)).until(() -> {
			assertThat(application.isAlive()).as("the application is running (its log: %s)", LOG).isTrue();
			return find(PORT) != null && find(RUN) != null;
		});
		base = "http://localhost:" + find(PORT);
		run = find(RUN);
	}

	@AfterAll
	static void stopItAndDeleteItsQueues() throws Exception {
		if (application != null) {
			application.destroy();
			if (!application.waitFor(60, TimeUnit.SECONDS)) {
				application.destroyForcibly();
			}
		}
		ConnectionFactory factory = new ConnectionFactory();
		factory.setHost(System.getProperty("spring.rabbitmq.host", "localhost"));
		factory.setPort(Integer.parseInt(System.getProperty("spring.rabbitmq.port", "5672")));
		factory.setUsername(System.getProperty("spring.rabbitmq.username", "guest"));
		factory.setPassword(System.getProperty("spring.rabbitmq.password", "guest"));
		try (Connection connection = factory.newConnection(); Channel channel = connection.createChannel()) {
			for (String queue : Stream
				.concat(Stream.of(ORDERS, PARKING_LOT), TIERS.stream().map("retry.delay."::concat))
				.toList()) {
				channel.queueDelete(queue);
			}
		}
	}

	@Test
	void theAotProcessedSampleRetriesParksAndReplaysAndItsEndpointAndConsoleAnswer() throws Exception {
		assertThat(log()).as("the application ran from the generated code")
			.contains("Starting AOT-processed SampleApplication");

		// Failed, retried through the tiers, paid on the second retry.
		awaitLog("Order " + run + "-13 (flaky-bob): paid 99.90 on retry 2");
		// Parked: after its last retry, and at once for a fraud (no-retry-on) and a
		// malformed payload.
		await().atMost(Duration.ofSeconds(60)).until(() -> parked().size() == 3);
		Map<String, String> reasons = new TreeMap<>();
		for (Map<String, Object> message : parked()) {
			reasons.put((String) message.get("messageId"), (String) message.get("parkedReason"));
		}
		assertThat(reasons).containsExactly(Map.entry(run + "-15", "exhausted"),
				Map.entry(run + "-16", "not-retryable"), Map.entry(run + "-17", "not-retryable"));

		String overview = get("/actuator/retry").body();
		List<String> noRetryOn = JsonPath.read(overview,
				"$.listeners[?(@.listener == 'OrderListener#onOrder')].effectivePolicy.noRetryOn[*]");
		assertThat(noRetryOn).containsExactly(PaymentGateway.FraudSuspectedException.class.getName());

		HttpResponse<String> console = get("/retry-console/");
		assertThat(console.statusCode()).isEqualTo(200);
		assertThat(console.headers().firstValue("Content-Type"))
			.hasValueSatisfying((type) -> assertThat(type).startsWith("text/html"));
		assertThat(get("/retry-console/console.js").statusCode()).isEqualTo(200);
		Number consoleDepth = JsonPath.read(get("/retry-console/api/overview").body(), "$.parkingLot.depth");
		assertThat(consoleDepth.longValue()).isGreaterThanOrEqualTo(3);

		// The outage is over: the exhausted order is replayed and paid.
		assertThat(post("/demo/provider/heal", "").statusCode()).isLessThan(300);
		HttpResponse<String> replay = post("/actuator/retry/parking-lot/replay", "{\"messageId\": \"" + run + "-15\"}");
		assertThat(replay.statusCode()).as(replay.body()).isEqualTo(202);
		awaitLog("Order " + run + "-15 (broke-dave): paid 250.00");
		await().atMost(Duration.ofSeconds(30)).until(() -> parked().size() == 2);
	}

	@Test
	void theBuildsNativeImageHintsNameThePoliciesExceptionClassAndTheConsolesFiles() throws IOException {
		Path metadata;
		try (Stream<Path> files = Files.walk(Path.of("target", "classes", "META-INF", "native-image"))) {
			metadata = files.filter((file) -> file.getFileName().toString().equals("reachability-metadata.json"))
				.findFirst()
				.orElseThrow(() -> new AssertionError(
						"no reachability-metadata.json under target/classes/META-INF/native-image"));
		}
		String hints = Files.readString(metadata, StandardCharsets.UTF_8);
		List<String> types = JsonPath.read(hints, "$.reflection[*].type");
		assertThat(types).contains(PaymentGateway.FraudSuspectedException.class.getName());
		List<String> resources = JsonPath.read(hints, "$.resources[*].glob");
		assertThat(resources).contains("io/github/tieredretry/internal/console/static/*");
	}

	private static List<Map<String, Object>> parked() throws IOException, InterruptedException {
		return JsonPath.read(get("/actuator/retry/parking-lot?limit=10&queue=" + ORDERS).body(), "$.messages");
	}

	private static void awaitLog(String line) {
		await().atMost(Duration.ofSeconds(60)).until(() -> log().contains(line));
	}

	private static HttpResponse<String> get(String path) throws IOException, InterruptedException {
		return http.send(HttpRequest.newBuilder(URI.create(base + path)).build(), HttpResponse.BodyHandlers.ofString());
	}

	private static HttpResponse<String> post(String path, String json) throws IOException, InterruptedException {
		return http.send(HttpRequest.newBuilder(URI.create(base + path))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private static String find(Pattern pattern) throws IOException {
		Matcher matcher = pattern.matcher(log());
		return matcher.find() ? matcher.group(1) : null;
	}

	private static String log() throws IOException {
		return Files.exists(LOG) ? Files.readString(LOG, StandardCharsets.UTF_8) : "";
	}

}
