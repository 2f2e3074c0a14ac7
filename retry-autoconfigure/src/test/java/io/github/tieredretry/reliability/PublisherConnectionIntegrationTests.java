package io.github.tieredretry.reliability;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.ScriptHeaderMessages;
import io.github.tieredretry.testsupport.TestQueues;
import io.github.tieredretry.testsupport.TopologyProperties;
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
		Map<String, Object> properties = TopologyProperties.retrying(topology, WORK, 0);
		properties.put("spring.rabbitmq.cache.connection.mode", "connection");
		BrokerClient broker = queues.broker();
		try (TcpProxy proxy = TcpProxy.toTestBroker();
				ProxiedApplication app = ProxiedApplication.start(proxy, null, properties)) {
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
		return ScriptHeaderMessages.publish(broker, WORK, script);
	}

}
