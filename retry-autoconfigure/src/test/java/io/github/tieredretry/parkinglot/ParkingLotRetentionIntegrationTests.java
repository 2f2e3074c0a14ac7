package io.github.tieredretry.parkinglot;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.console.OperatorActions;
import io.github.tieredretry.internal.metrics.RetryEventMetrics;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.TestApplications;
import io.github.tieredretry.testsupport.TestQueues;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.actuate.audit.AuditEvent;
import org.springframework.boot.actuate.audit.AuditEventRepository;
import org.springframework.boot.actuate.audit.InMemoryAuditEventRepository;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The retention of an application ({@code retry.retention.*}) on a quorum parking lot:
 * messages that outlive the maximum age are removed at the next check while it runs, and
 * those that aged while it was down are removed when it starts again; each removal is
 * counted in {@value RetryEventMetrics#EXPIRED}, logged and audited, and a young message
 * stays.
 */
class ParkingLotRetentionIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("retention");

	static final String PARKING_LOT = queues.name("parking");

	static final String ORDERS = queues.name("orders");

	@AfterAll
	static void deleteTheTier() {
		try (BrokerClient broker = new BrokerClient()) {
			broker.deleteQueue("retry.delay.1277ms");
		}
	}

	@Test
	void oldParkedMessagesAreRemovedWhileTheApplicationRunsAndWhenItStartsAgain() {
		try (BrokerClient broker = new BrokerClient()) {
			try (ConfigurableApplicationContext running = start("200ms")) {
				park(broker, 8);
				park(broker, 9);
				await().atMost(Duration.ofSeconds(20)).until(() -> expired(running) == 2);
				// One check, or two when a check ran between the two publishes (it runs
				// every
				// 200 ms): audited per check, two removals in all.
				List<AuditEvent> events = retentionEvents(running);
				assertThat(events).isNotEmpty()
					.allSatisfy((event) -> assertThat(event.getData()).containsEntry("parkingLot", PARKING_LOT));
				assertThat(events.stream().mapToLong((event) -> (Long) event.getData().get("olderThanMaxAge")).sum())
					.isEqualTo(2);
			}
			// Parked while the application is down: three that are old, one that is not.
			park(broker, 10);
			park(broker, 30);
			park(broker, 8);
			String young = park(broker, 1);
			try (ConfigurableApplicationContext restarted = start("1h")) {
				await().atMost(Duration.ofSeconds(20)).until(() -> expired(restarted) == 3);
				assertThat(retentionEvents(restarted)).singleElement()
					.satisfies((event) -> assertThat(event.getPrincipal()).isEqualTo(OperatorActions.RETENTION_AUTHOR));
			}
			assertThat(broker.drain(PARKING_LOT)).extracting((message) -> message.properties().getMessageId())
				.containsExactly(young);
		}
	}

	private static ConfigurableApplicationContext start(String checkInterval) {
		Map<String, Object> properties = TestApplications.brokerProperties();
		properties.put("retry.parking-lot", PARKING_LOT);
		properties.put("retry.tiers", "1277ms");
		properties.put("retry.retention.max-age", "7d");
		properties.put("retry.retention.check-interval", checkInterval);
		return TestApplications.run(App.class, properties);
	}

	private static String park(BrokerClient broker, int daysAgo) {
		Map<String, Object> headers = new LinkedHashMap<>();
		headers.put(RetryHeaders.QUEUE, ORDERS);
		headers.put(RetryHeaders.PARKED_REASON, "exhausted");
		headers.put(RetryHeaders.PARKED_AT, Instant.now().minus(Duration.ofDays(daysAgo)).toEpochMilli());
		String id = "parked-" + UUID.randomUUID();
		broker.publish("", PARKING_LOT, new AMQP.BasicProperties.Builder().messageId(id).headers(headers).build(),
				("parked " + daysAgo + " days ago").getBytes(StandardCharsets.UTF_8));
		return id;
	}

	private static double expired(ConfigurableApplicationContext context) {
		return context.getBean(MeterRegistry.class)
			.find(RetryEventMetrics.EXPIRED)
			.tag("limit", "max-age")
			.counters()
			.stream()
			.mapToDouble((counter) -> counter.count())
			.sum();
	}

	private static List<AuditEvent> retentionEvents(ConfigurableApplicationContext context) {
		return context.getBean(AuditEventRepository.class).find(null, null, OperatorActions.RETENTION);
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

		@Bean
		InMemoryAuditEventRepository auditEventRepository() {
			return new InMemoryAuditEventRepository();
		}

	}

}
