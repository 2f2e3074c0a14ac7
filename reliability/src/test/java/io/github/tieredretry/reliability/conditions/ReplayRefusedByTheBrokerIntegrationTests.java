package io.github.tieredretry.reliability.conditions;

import java.io.IOException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.parkinglot.ReplayResult;
import io.github.tieredretry.parkinglot.StayReason;
import io.github.tieredretry.testbrokers.HarnessBroker;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A replay whose publish the broker refuses with a channel error must leave the parked
 * message parked (issue #18): here every replayed message is larger than the node's
 * {@code max_message_size}, so the broker closes the publishing channel (406) right after
 * the publish. Before the fix, a confirm wait that the cached-channel proxy moved to a
 * fresh channel reported some of those publishes as confirmed, and the parked originals
 * were acked: lost. Runs on a node of its own, because it changes a node-wide setting.
 */
class ReplayRefusedByTheBrokerIntegrationTests {

	static final String PARKING_LOT = "replay-refused.parking-lot";

	static final String ORIGIN = "replay-refused.orders";

	static final int PARKED = 50;

	@Test
	void replayRefusedByTheBrokerLeavesEveryParkedMessageParkedAndSaysWhy() throws Exception {
		Map<String, Object> properties = Map.of("test.work", ORIGIN, "retry.tiers", "1s", "retry.parking-lot",
				PARKING_LOT, "retry.queue-type", "quorum");
		HarnessBroker broker = ConditionsBroker.get();
		String vhost = ConditionsBroker.newVirtualHost("replay-refused");
		try (HarnessApplication app = HarnessApplication.start(broker, vhost, properties)) {
			try (Connection connection = broker.connect(vhost, "replay-refused-parker")) {
				Channel channel = connection.createChannel();
				channel.confirmSelect();
				for (int i = 0; i < PARKED; i++) {
					park(channel, "parked-" + i);
				}
				channel.waitForConfirmsOrDie(10_000);
			}
			setMaxMessageSize(4096, broker, vhost);
			ParkingLotService parkingLot = app.bean(ParkingLotService.class);
			int reportedMoved = 0;
			try {
				for (int call = 0; call < 100; call++) {
					ReplayResult result = parkingLot.replay(null, null);
					reportedMoved += result.moved();
					assertThat(result.stayedByReason()).as("call %d: %s", call, result)
						.containsEntry(StayReason.PUBLISH_FAILED.value(), 1);
					assertThat(result.stayedMessages()).singleElement()
						.satisfies((stayed) -> assertThat(stayed.detail()).contains("406"));
				}
			}
			finally {
				setMaxMessageSize(134_217_728, broker, vhost);
			}
			Connection connection = broker.connect(vhost, "replay-refused-test");
			Channel channel = connection.createChannel();
			assertThat(reportedMoved).as("replays reported as moved although the broker refused them").isZero();
			// A quorum queue applies the replay's final requeue asynchronously: the count
			// catches up.
			await().untilAsserted(
					() -> assertThat(channel.messageCount(PARKING_LOT)).as("still parked").isEqualTo(PARKED));
			assertThat(channel.messageCount(ORIGIN)).isZero();

			ReplayResult healed = parkingLot.replay(null, null);
			assertThat(healed.moved()).isEqualTo(PARKED);
			await().untilAsserted(() -> assertThat(app.deliveries().all()).hasSize(PARKED));
			assertThat(channel.messageCount(PARKING_LOT)).isZero();
			connection.close();
		}
	}

	private static void park(Channel channel, String messageId) throws IOException {
		Map<String, Object> headers = new LinkedHashMap<>();
		headers.put("retry-queue", ORIGIN);
		headers.put("retry-parked-reason", "exhausted");
		byte[] body = new byte[8 * 1024];
		Arrays.fill(body, (byte) 'x');
		channel.basicPublish("", PARKING_LOT, true,
				new AMQP.BasicProperties.Builder().messageId(messageId).deliveryMode(2).headers(headers).build(), body);
	}

	private static void setMaxMessageSize(long bytes, HarnessBroker broker, String vhost) {
		// RabbitMQ 3.10 reads the setting when a channel opens; 4.x keeps the value read
		// at boot in a persistent term, which is changed too where it exists.
		broker
			.ctl("eval",
					"application:set_env(rabbit, max_message_size, " + bytes + "), "
							+ "case persistent_term:get(max_message_size, undefined) of undefined -> ok; "
							+ "_ -> persistent_term:put(max_message_size, " + bytes + ") end.")
			.requireSuccess();
		// The application's connections reconnect, so that every channel is new.
		broker.closeAllConnections(vhost, "max_message_size changed");
	}

}
