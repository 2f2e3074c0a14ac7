package io.github.tieredretry.reliability;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.impl.AMQContentHeader;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.InvocationRecorder;
import io.github.tieredretry.testsupport.ParkingLot;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.Script;
import io.github.tieredretry.testsupport.TestQueues;
import io.github.tieredretry.testsupport.WorkQueueApplication;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A message that arrives with headers close to the broker's {@code frame_max} (legal: the
 * broker took it) and then fails: the failure headers the starter adds must not push the
 * forward over the limit, or the forward can never succeed and the message circles
 * between its queue and the listener forever. In a context of its own, closed afterwards,
 * so that such a message cannot slow down other tests.
 */
@SpringBootTest(classes = WorkQueueApplication.class)
@RabbitIntegrationTest
class OversizedHeadersIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("big-headers");

	static final TestQueues.Topology topology = queues.topology();

	static final String WORK = queues.name("work");

	static {
		queues.settings((settings) -> settings.topology(topology)
			.retries(1, topology.shortTier())
			.set("test.work", WORK)
			.set("retry.headers.include-stack-trace", "true")
			.set("retry.publish.failure-initial-pause", "100ms")
			.set("retry.publish.failure-max-pause", "500ms"));
	}

	@Autowired
	InvocationRecorder deliveries;

	@Test
	void failingMessageWhoseOwnHeadersAlmostFillFrameMaxIsStillParked() throws IOException {
		BrokerClient broker = queues.broker();
		int frameMax = broker.channel().getConnection().getFrameMax();
		String id = UUID.randomUUID().toString();
		AMQP.BasicProperties properties = propertiesFilling(id, frameMax - 2_000);
		broker.publish("", WORK, properties, "payload".getBytes(StandardCharsets.UTF_8));

		ParkingLot parked = queues.parkingLot(topology.parkingLot());
		await().atMost(Duration.ofSeconds(20)).until(() -> parked.contains(id));
		BrokerClient.Received parkedMessage = parked.single(id);
		assertThat(parkedMessage.header(RetryHeaders.PARKED_REASON)).isEqualTo("exhausted");
		assertThat(parkedMessage.header("filler")).isEqualTo(properties.getHeaders().get("filler").toString());
		assertThat(this.deliveries.count(id)).isEqualTo(2);
	}

	/** Properties whose encoded content header is about {@code size} bytes. */
	private static AMQP.BasicProperties propertiesFilling(String id, int size) throws IOException {
		Map<String, Object> headers = new LinkedHashMap<>();
		headers.put(Script.HEADER, "always");
		headers.put("filler", "");
		AMQP.BasicProperties empty = build(id, headers);
		int overhead = ((AMQContentHeader) empty).toFrame(1, 7).size();
		headers.put("filler", "x".repeat(size - overhead));
		return build(id, headers);
	}

	private static AMQP.BasicProperties build(String id, Map<String, Object> headers) {
		return new AMQP.BasicProperties.Builder().messageId(id)
			.deliveryMode(2)
			.contentType("text/plain")
			.headers(new LinkedHashMap<>(headers))
			.build();
	}

}
