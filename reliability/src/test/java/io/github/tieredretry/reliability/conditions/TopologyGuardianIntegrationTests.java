package io.github.tieredretry.reliability.conditions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.testbrokers.HarnessBroker;
import io.github.tieredretry.testsupport.InvocationRecorder;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The topology guardian ({@code retry.topology.check-interval}) declares a deleted
 * {@code retry.return} exchange, tier queue and parking lot again on its own schedule,
 * without a reconnection and without a forward to heal them: nothing forwards to
 * {@code retry.return}, so until it is back every retry leaving a tier is dropped by the
 * broker. The work queue's binding, lost with the exchange, comes back with it.
 * <p>
 * On a node of its own, in a virtual host of its own: the {@code retry.*} exchanges are
 * shared by every application of a virtual host, and deleting them on a shared broker
 * would drop other applications' retries.
 */
class TopologyGuardianIntegrationTests {

	static final String WORK = "guardian.orders";

	static final String PARKING_LOT = "guardian.parking-lot";

	static final String TIER = "retry.delay.1s";

	@Test
	void guardianDeclaresADeletedReturnExchangeTierAndParkingLotAgainOnItsScheduleWithoutAReconnection()
			throws Exception {
		HarnessBroker broker = ConditionsBroker.get();
		String vhost = ConditionsBroker.newVirtualHost("guardian");
		Map<String, Object> properties = Map.of("test.work", WORK, "retry.queue-type", "quorum", "retry.parking-lot",
				PARKING_LOT, "retry.tiers", "1s", "retry.defaults.max-retries", 1, "retry.defaults.delays", "1s",
				"retry.topology.check-interval", "500ms");
		try (HarnessApplication app = HarnessApplication.start(broker, vhost, properties);
				Connection connection = broker.connect(vhost, "guardian-test")) {
			Set<String> applicationConnections = connectionsOf(broker, vhost);
			Channel channel = connection.createChannel();
			channel.exchangeDelete(RetryTopology.RETURN_EXCHANGE);
			channel.queueDelete(TIER);
			channel.queueDelete(PARKING_LOT);

			// Nothing is published and no connection is lost: only the guardian's
			// scheduled check can declare them again.
			await().atMost(Duration.ofSeconds(10))
				.until(() -> exists(connection, RetryTopology.RETURN_EXCHANGE, true) && exists(connection, TIER, false)
						&& exists(connection, PARKING_LOT, false));
			assertThat(connectionsOf(broker, vhost)).as("connections of the application")
				.containsAll(applicationConnections);
			assertThat(declaresReturnExchangeEquivalently(connection)).as("retry.return with its alternate exchange")
				.isTrue();

			// The work queue's binding is back: a retry leaving its tier returns to its
			// queue instead of the parking lot (unroutable).
			String id = publish(channel, "fail:1");
			await().atMost(Duration.ofSeconds(20)).until(() -> app.deliveries().succeeded(id));
			assertThat(app.deliveries().of(id)).extracting(InvocationRecorder.Invocation::retryCount)
				.containsExactly(0L, 1L);
			assertThat(channel.messageCount(PARKING_LOT)).isZero();
		}
	}

	private static Set<String> connectionsOf(HarnessBroker broker, String vhost) {
		String output = broker.ctl("list_connections", "pid", "vhost", "--no-table-headers", "--quiet")
			.requireSuccess()
			.output();
		return output.lines()
			.map((line) -> line.strip().split("\\s+"))
			.filter((columns) -> columns.length == 2 && columns[1].equals(vhost))
			.map((columns) -> columns[0])
			.collect(Collectors.toSet());
	}

	// On a channel of its own: a passive declaration of something missing closes it.
	private static boolean exists(Connection connection, String name, boolean exchange)
			throws IOException, TimeoutException {
		try (Channel probe = connection.createChannel()) {
			if (exchange) {
				probe.exchangeDeclarePassive(name);
			}
			else {
				probe.queueDeclarePassive(name);
			}
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	// RabbitMQ refuses (406) to declare an existing exchange with other arguments.
	private static boolean declaresReturnExchangeEquivalently(Connection connection) throws TimeoutException {
		try (Channel probe = connection.createChannel()) {
			probe.exchangeDeclare(RetryTopology.RETURN_EXCHANGE, "direct", true, false,
					Map.of("alternate-exchange", RetryTopology.UNROUTABLE_EXCHANGE));
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	private static String publish(Channel channel, String script)
			throws IOException, InterruptedException, TimeoutException {
		String id = UUID.randomUUID().toString();
		channel.confirmSelect();
		channel.basicPublish("", WORK, new AMQP.BasicProperties.Builder().messageId(id).deliveryMode(2).build(),
				script.getBytes(StandardCharsets.UTF_8));
		channel.waitForConfirmsOrDie(10_000);
		return id;
	}

}
