package io.github.tieredretry.sample;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import io.github.tieredretry.testbrokers.HarnessBroker;
import io.github.tieredretry.testbrokers.HarnessBrokers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Operators alert on errors in the broker's log: a normal first start of the sample on an
 * empty virtual host, its demo, and a restart leave none (issue #25; before, the startup
 * check's passive declarations left one "channel exception not_found" per retry object
 * that did not exist yet). On a RabbitMQ node of its own, so that its log holds nothing
 * else; of the version the broker matrix asks for.
 */
class BrokerLogIntegrationTests {

	static HarnessBroker broker;

	@BeforeAll
	static void startOwnBroker() {
		broker = HarnessBrokers.start(Path.of("target", "broker-log").toAbsolutePath());
	}

	@AfterAll
	static void stopOwnBroker() {
		if (broker != null) {
			broker.close();
		}
	}

	@Test
	void firstStartTheDemoAndARestartLeaveNoErrorInTheBrokersLog() {
		broker.createVirtualHost("sample");
		List<String> errorsBefore = errors();

		try (ConfigurableApplicationContext first = start()) {
			// The demo's orders: paid, retried, parked.
			await().atMost(Duration.ofSeconds(90))
				.until(() -> broker.queueDepths("sample").getOrDefault("sample.parking-lot", 0L) >= 3);
		}
		try (ConfigurableApplicationContext restarted = start()) {
			assertThat(restarted.isActive()).isTrue();
		}

		List<String> errors = errors();
		assertThat(errors.subList(errorsBefore.size(), errors.size())).as("errors in %s's log", broker.description())
			.isEmpty();
	}

	private static ConfigurableApplicationContext start() {
		return new SpringApplicationBuilder(SampleApplication.class).run("--spring.rabbitmq.host=" + broker.host(),
				"--spring.rabbitmq.port=" + broker.port(), "--spring.rabbitmq.username=" + broker.username(),
				"--spring.rabbitmq.password=" + broker.password(), "--spring.rabbitmq.virtual-host=sample",
				"--server.port=0",
				// Short tiers: the demo's orders are parked within a second instead of 21
				// s.
				"--retry.tiers=200ms,400ms", "--retry.policies.payments.delays=200ms,400ms");
	}

	private static List<String> errors() {
		return Arrays.stream(broker.log().split("\n"))
			.filter((line) -> line.contains("[error]") || line.contains("[critical]"))
			.toList();
	}

}
