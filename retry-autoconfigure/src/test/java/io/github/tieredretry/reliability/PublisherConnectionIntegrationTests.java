package io.github.tieredretry.reliability;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.Script;
import io.github.tieredretry.testsupport.TestBroker;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The connection that forwards failed messages: one long-lived connection, whatever the
 * application's connection cache mode.
 */
class PublisherConnectionIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("publisher-connection");

	static final TestQueues.Topology topology = queues.topology();

	static final String WORK = queues.name("work");

	@Test
	void forwardsShareOneConnectionEvenWhenTheApplicationCachesConnections() {
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("test.work", WORK);
		properties.put("retry.parking-lot", topology.parkingLot());
		properties.put("retry.tiers", topology.tiers());
		properties.put("retry.defaults.max-retries", 0);
		properties.put("spring.rabbitmq.cache.connection.mode", "connection");
		TestBroker upstream = TestBroker.get();
		try (TcpProxy proxy = new TcpProxy(upstream.host(), upstream.port());
				ProxiedApplication app = ProxiedApplication.start(proxy, null, properties);
				BrokerClient broker = new BrokerClient()) {
			String warmUp = publish(broker, "fail-until-retry:1");
			await().atMost(Duration.ofSeconds(10)).until(() -> broker.count(topology.parkingLot()) == 1);
			int connectionsBefore = proxy.accepted();

			List<String> ids = new ArrayList<>();
			for (int i = 0; i < 100; i++) {
				ids.add(publish(broker, "fail-until-retry:1"));
			}
			await().atMost(Duration.ofSeconds(30)).until(() -> broker.count(topology.parkingLot()) == 101);
			// In CONNECTION cache mode every forward used to open a connection of its own
			// and never close it.
			assertThat(proxy.accepted() - connectionsBefore).as("connections opened by 100 forwards").isZero();
			assertThat(warmUp).isNotNull();
		}
	}

	private static String publish(BrokerClient broker, String script) {
		String id = UUID.randomUUID().toString();
		AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().messageId(id)
			.deliveryMode(2)
			.headers(Map.of(Script.HEADER, script))
			.build();
		broker.publish("", WORK, properties, "x".getBytes(StandardCharsets.UTF_8));
		return id;
	}

}
