package io.github.tieredretry.reliability.faultrun;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.awaitility.Awaitility.await;

/**
 * Calls a consumer instance's actuator endpoints over HTTP, as an operator would: the
 * retry health, a meter, and the parking lot's replay.
 */
final class ConsumerEndpoints {

	private static final JsonMapper json = JsonMapper.builder().build();

	private static final String REPLAY = "/actuator/retry/parking-lot/replay";

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	/**
	 * {@code GET /actuator/health/retry}, in short.
	 * @param port the instance's HTTP port
	 * @return e.g. {@code UP (tiers 3+0, parked 12)}, {@code DOWN (error ...)}, or why
	 * the instance did not answer
	 */
	String retryHealth(int port) {
		try {
			JsonNode health = get(port, "/actuator/health/retry", Duration.ofSeconds(5));
			JsonNode details = health.path("details");
			List<String> tiers = new ArrayList<>();
			details.path("tiers").forEach((depth) -> tiers.add(depth.asString()));
			String summary = details.has("error") ? "error " + details.path("error").asString()
					: "tiers " + String.join("+", tiers) + ", parked "
							+ details.path("parkingLot").path("depth").asString()
							+ (details.has("missingQueues") ? ", missing " + details.path("missingQueues") : "");
			return health.path("status").asString() + " (" + summary + ")";
		}
		catch (IllegalStateException ex) {
			return "no answer: " + ex.getMessage();
		}
	}

	/**
	 * The count of {@code rabbitmq.retry.messages} with one outcome, since the instance
	 * started.
	 * @param port the instance's HTTP port
	 * @param outcome e.g. {@code forward-failed}
	 * @return the count (0 when the meter was never recorded), or -1 when the instance
	 * did not answer
	 */
	long retryMessages(int port, String outcome) {
		try {
			JsonNode meter = get(port, "/actuator/metrics/rabbitmq.retry.messages?tag=outcome:" + outcome,
					Duration.ofSeconds(5));
			return (long) meter.path("measurements").path(0).path("value").asDouble();
		}
		catch (NotFoundException ex) {
			return 0;
		}
		catch (IllegalStateException ex) {
			return -1;
		}
	}

	/**
	 * {@code POST /actuator/retry/parking-lot/replay} with body {@code {"queue": "..."}},
	 * which starts the replay in the background ({@code 202}), then {@code GET} of the
	 * same path until it no longer runs.
	 * @param port the instance's HTTP port
	 * @param queue the origin queue whose parked messages to replay
	 * @return the finished replay's status ({@code moved}, {@code stayed},
	 * {@code stayedByReason}, {@code scanned})
	 */
	JsonNode replay(int port, String queue) {
		HttpRequest request = HttpRequest.newBuilder(uri(port, REPLAY))
			.timeout(Duration.ofMinutes(1))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json.writeValueAsString(Map.of("queue", queue))))
			.build();
		JsonNode started = send(request);
		if (!isRunning(started)) {
			return started;
		}
		String id = started.path("id").asString();
		return await().atMost(Duration.ofMinutes(5))
			.pollInterval(Duration.ofMillis(50))
			.alias("replay " + id + " on port " + port + " to finish")
			.until(() -> replayStatus(port, id), (status) -> !isRunning(status));
	}

	private JsonNode replayStatus(int port, String id) {
		JsonNode status = get(port, REPLAY, Duration.ofSeconds(30));
		if (!id.equals(status.path("id").asString())) {
			throw new IllegalStateException("Another replay than " + id + " on port " + port + ": " + status);
		}
		return status;
	}

	private static boolean isRunning(JsonNode status) {
		return "running".equals(status.path("state").asString());
	}

	private JsonNode get(int port, String path, Duration timeout) {
		return send(HttpRequest.newBuilder(uri(port, path)).timeout(timeout).GET().build());
	}

	private JsonNode send(HttpRequest request) {
		try {
			HttpResponse<String> response = this.client.send(request, HttpResponse.BodyHandlers.ofString());
			if (response.statusCode() == 404) {
				throw new NotFoundException(request.uri() + ": 404");
			}
			// A DOWN health answers 503 with its body, a replay started in the background
			// 202: still answers.
			if (response.statusCode() != 200 && response.statusCode() != 202 && response.statusCode() != 503) {
				throw new IllegalStateException(
						request.uri() + ": HTTP " + response.statusCode() + " " + response.body());
			}
			return json.readTree(response.body());
		}
		catch (IOException ex) {
			throw new IllegalStateException(request.uri() + ": " + ex, ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted calling " + request.uri(), ex);
		}
	}

	private static URI uri(int port, String path) {
		return URI.create("http://127.0.0.1:" + port + path);
	}

	private static final class NotFoundException extends IllegalStateException {

		NotFoundException(String message) {
			super(message);
		}

	}

}
