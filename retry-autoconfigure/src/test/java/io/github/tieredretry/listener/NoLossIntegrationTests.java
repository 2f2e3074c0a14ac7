package io.github.tieredretry.listener;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.ParkingLot;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.ScriptedApplication;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Every message that enters a retryable listener ends processed or parked: a mixed run of
 * 2,000 messages on concurrent consumers, each accounted for.
 */
@SpringBootTest(classes = ScriptedApplication.class)
@RabbitIntegrationTest
class NoLossIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("noloss")
		.settings((settings) -> settings.classicTiers("100ms, 300ms")
			.retries(3, "100ms, 300ms")
			.set("retry.defaults.no-retry-on", IllegalArgumentException.class.getName())
			.set("spring.rabbitmq.listener.simple.concurrency", 4));

	static final String QUEUE = queues.name("work");

	static final int MESSAGES = 2_000;

	@Autowired
	InvocationRecorder recorder;

	@Test
	void everyMessageOfAMixedRunIsProcessedOrParkedAndNoneIsLost() {
		Random random = new Random(7);
		Map<String, String> scripts = new HashMap<>();
		try (BrokerClient broker = new BrokerClient()) {
			for (int i = 0; i < MESSAGES; i++) {
				int dice = random.nextInt(100);
				String script = (dice < 70) ? "ok"
						: (dice < 90) ? "fail:" + (1 + random.nextInt(3)) : (dice < 97) ? "always" : "reject";
				String id = "m" + i + "-" + queues.id();
				scripts.put(id, script);
				broker.publish("", QUEUE, new AMQP.BasicProperties.Builder().messageId(id).deliveryMode(2).build(),
						script.getBytes(StandardCharsets.UTF_8));
			}
			ParkingLot parkingLot = new ParkingLot(broker, queues.parkingLotName());
			List<String> expectedParked = scripts.entrySet()
				.stream()
				.filter((entry) -> entry.getValue().equals("always") || entry.getValue().equals("reject"))
				.map(Map.Entry::getKey)
				.toList();

			await().atMost(Duration.ofSeconds(90))
				.pollInterval(Duration.ofMillis(500))
				.until(() -> accountedFor(scripts.keySet(), parkingLot.all().keySet()) == MESSAGES);

			Set<String> processed = processed(scripts.keySet());
			Set<String> parked = parkingLot.all().keySet();
			List<String> missing = new ArrayList<>(scripts.keySet());
			missing.removeIf((id) -> processed.contains(id) || parked.contains(id));
			assertThat(missing).as("lost messages").isEmpty();
			assertThat(parked).containsExactlyInAnyOrderElementsOf(expectedParked);
			assertThat(processed).doesNotContainAnyElementsOf(parked);
			parkingLot.all()
				.forEach((id, message) -> assertThat(message.header(RetryHeaders.PARKED_REASON))
					.isEqualTo(scripts.get(id).equals("always") ? "exhausted" : "not-retryable"));
			scripts.forEach((id, script) -> {
				if (script.startsWith("fail:")) {
					assertThat(this.recorder.of(id).get(this.recorder.count(id) - 1).retryCount())
						.isEqualTo(Long.parseLong(script.substring(5)));
				}
			});
			assertThat(broker.count(QUEUE)).isZero();
		}
	}

	private int accountedFor(Set<String> ids, Set<String> parked) {
		Set<String> done = new HashSet<>(processed(ids));
		done.addAll(parked);
		return done.size();
	}

	private Set<String> processed(Set<String> ids) {
		Set<String> processed = new HashSet<>();
		for (String id : ids) {
			if (this.recorder.succeeded(id)) {
				processed.add(id);
			}
		}
		return processed;
	}

}
