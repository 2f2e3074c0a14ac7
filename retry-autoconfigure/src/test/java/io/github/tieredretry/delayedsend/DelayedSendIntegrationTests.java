package io.github.tieredretry.delayedsend;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.UUID;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.console.RetryOverview;
import io.github.tieredretry.internal.delayedsend.ScheduledCounts;
import io.github.tieredretry.internal.metrics.ScheduledSendMetrics;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.testsupport.BrokerClient;
import io.github.tieredretry.testsupport.RabbitIntegrationTest;
import io.github.tieredretry.testsupport.TestQueues;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * Delayed sends against the real broker: a message sent with a delay reaches its target
 * exchange never early, late by at most the smallest tier, with body, properties, routing
 * key and extra routing keys exactly as a direct publish of the same message; a target
 * that does not take it parks it with the reason, and a replay sends it again; scheduled
 * messages are counted per tier while they wait.
 */
@SpringBootTest
@RabbitIntegrationTest
class DelayedSendIntegrationTests {

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("delayed-send");

	static final TestQueues.Topology topology = queues.topology();

	static final String EXCHANGE = queues.name("exchange");

	static final String DIRECT = queues.name("direct");

	static final String DELAYED = queues.name("delayed");

	static final String COPIES = queues.name("copies");

	static final String LATE_BOUND = queues.name("late-bound");

	static final String SCHEDULED = queues.name("scheduled");

	/** Broker and scheduling latency on a loaded machine, beyond the smallest tier. */
	static final Duration SLACK = Duration.ofSeconds(1);

	static {
		queues.settings((settings) -> settings.parkingLot(topology.parkingLot())
			.set("retry.tiers", topology.tiers())
			.set("retry.delayed-send.queue", SCHEDULED));
	}

	@BeforeAll
	static void declareTarget() throws Exception {
		try (BrokerClient client = new BrokerClient()) {
			Channel channel = client.channel();
			channel.exchangeDeclare(EXCHANGE, BuiltinExchangeType.DIRECT, false, false, null);
			for (String queue : List.of(DIRECT, DELAYED, COPIES, LATE_BOUND)) {
				client.declareQueue(queue);
			}
			channel.queueBind(DIRECT, EXCHANGE, "direct");
			channel.queueBind(DELAYED, EXCHANGE, "delayed");
			channel.queueBind(COPIES, EXCHANGE, "copies");
		}
	}

	@AfterAll
	static void deleteTarget() {
		try (BrokerClient client = new BrokerClient()) {
			client.deleteExchange(EXCHANGE);
		}
	}

	@Autowired
	DelayedSender sender;

	@Autowired
	RabbitTemplate template;

	@Autowired
	ScheduledCounts counts;

	@Autowired
	ParkingLotService parkingLot;

	@Autowired
	RetryOverview overview;

	@Autowired
	MeterRegistry meters;

	@Test
	void arrivesNeverEarlyAndExactlyAsADirectPublishOfTheSameMessage() throws Exception {
		Message message = message("order-1");
		Duration delay = Duration.ofMillis(1500);
		this.template.send(EXCHANGE, "direct", message);
		Instant sent = Instant.now();
		this.sender.send(EXCHANGE, "delayed", message, delay);

		GetResponse delayed = awaitMessage(DELAYED, delay.plus(topology.shortTier()).plus(SLACK).plusSeconds(5));
		Instant arrived = Instant.now();
		GetResponse direct = queues.broker().channel().basicGet(DIRECT, true);

		assertThat(arrived).as("never early").isAfterOrEqualTo(sent.plus(delay));
		assertThat(Duration.between(sent, arrived)).as("late by at most the smallest tier")
			.isLessThanOrEqualTo(delay.plus(topology.shortTier()).plus(SLACK));
		assertThat(delayed.getBody()).isEqualTo(direct.getBody());
		assertSameProperties(delayed.getProps(), direct.getProps());
		assertThat(delayed.getEnvelope().getExchange()).isEqualTo(EXCHANGE);
		assertThat(delayed.getEnvelope().getRoutingKey()).isEqualTo("delayed");
		// CC routed both copies to the queue it names, as the broker routes a direct
		// publish, and nowhere on the way.
		assertThat(queues.broker().drain(COPIES))
			.filteredOn((copy) -> "order-1".equals(copy.properties().getMessageId()))
			.hasSize(2);
		assertThat(this.counts.total()).isZero();
	}

	@Test
	void convertsAPayloadAsTheTemplateDoesAndSendsAtATime() throws Exception {
		this.template.convertAndSend(EXCHANGE, "direct", "remind me");
		this.sender.convertAndSend(EXCHANGE, "delayed", "remind me", Instant.now().plusMillis(700));

		GetResponse delayed = awaitMessage(DELAYED, Duration.ofSeconds(10));
		GetResponse direct = queues.broker().channel().basicGet(DIRECT, true);
		assertThat(delayed.getBody()).asString(StandardCharsets.UTF_8).isEqualTo("remind me");
		assertSameProperties(delayed.getProps(), direct.getProps());
	}

	@Test
	void waitingMessagesAreCountedPerTierUntilTheyArrive() throws Exception {
		Duration delay = topology.longTier().multipliedBy(2);
		this.sender.send(EXCHANGE, "delayed", message("counted"), delay);
		this.sender.send(EXCHANGE, "delayed", message("counted-too"), delay);

		assertThat(this.counts.byTier()).containsEntry(topology.longTier(), 2L).containsEntry(topology.shortTier(), 0L);
		// The endpoint's and the console's overview, and the gauge, say the same.
		assertThat(this.overview.describe().tiers())
			.extracting(RetryOverview.Tier::ttlMillis, RetryOverview.Tier::scheduled)
			.containsExactly(tuple(topology.shortTier().toMillis(), 0L), tuple(topology.longTier().toMillis(), 2L));
		assertThat(this.meters.get(ScheduledSendMetrics.SCHEDULED)
			.tag("tier", TierLadder.nameOf(topology.longTier()))
			.gauge()
			.value()).isEqualTo(2.0);
		awaitMessage(DELAYED, delay.plusSeconds(10));
		await().atMost(Duration.ofSeconds(10)).until(() -> queues.broker().count(DELAYED) == 1);
		queues.broker().drain(DELAYED);
		assertThat(this.counts.total()).isZero();
	}

	@Test
	void targetWithoutAQueueForTheRoutingKeyParksTheMessageAndAReplaySendsItAgain() throws Exception {
		String id = UUID.randomUUID().toString();
		Message message = message(id);
		// Without extra routing keys: the CC header alone would route it.
		message.getMessageProperties().getHeaders().remove("CC");
		this.sender.send(EXCHANGE, "late", message, Duration.ZERO);

		BrokerClient.Received parked = await().atMost(Duration.ofSeconds(10))
			.until(() -> queues.parkingLot(topology.parkingLot()).find(id), (found) -> found != null);
		assertThat(parked.body()).isEqualTo(message.getBody());
		assertThat(parked.header(RetryHeaders.PARKED_REASON)).isEqualTo("unroutable");
		assertThat(parked.header(RetryHeaders.QUEUE)).isEqualTo(SCHEDULED);
		assertThat(parked.header(RetryHeaders.EXCEPTION)).isEqualTo(DelayedSendException.class.getName());
		assertThat(parked.header(RetryHeaders.ERROR)).contains("no queue is bound to exchange '" + EXCHANGE + "'")
			.contains("'late'");
		// Put back for the replay: the test's reader drained it.
		queues.broker().publish("", topology.parkingLot(), parked.properties(), parked.body());

		queues.broker().channel().queueBind(LATE_BOUND, EXCHANGE, "late");
		assertThat(this.parkingLot.replay(SCHEDULED, null).moved()).isOne();
		GetResponse replayed = awaitMessage(LATE_BOUND, Duration.ofSeconds(10));
		assertThat(replayed.getBody()).isEqualTo(message.getBody());
		assertThat(replayed.getProps().getHeaders()).doesNotContainKeys(RetryHeaders.REPLAY_COUNT,
				RetryHeaders.PARKED_REASON, RetryHeaders.SEND_EXCHANGE, RetryHeaders.QUEUE);
		assertThat(replayed.getEnvelope().getRoutingKey()).isEqualTo("late");
	}

	@Test
	void missingExchangeParksTheMessageWithTheReason() {
		String id = UUID.randomUUID().toString();
		String missing = "no-such-exchange-" + queues.id();
		this.sender.send(missing, "any", message(id), Duration.ofMillis(100));

		BrokerClient.Received parked = await().atMost(Duration.ofSeconds(10))
			.until(() -> queues.parkingLot(topology.parkingLot()).find(id), (found) -> found != null);
		assertThat(parked.header(RetryHeaders.ERROR)).contains("exchange '" + missing + "' does not exist");
		assertThat(parked.header(RetryHeaders.SEND_EXCHANGE)).isEqualTo(missing);
	}

	private static Message message(String id) {
		MessageProperties properties = new MessageProperties();
		properties.setMessageId(id);
		properties.setCorrelationId("correlation-" + id);
		properties.setContentType("application/json");
		properties.setContentEncoding("utf-8");
		properties.setPriority(3);
		properties.setExpiration("600000");
		properties.setDeliveryMode(MessageDeliveryMode.NON_PERSISTENT);
		properties.setAppId("orders");
		properties.setType("reminder");
		properties.setTimestamp(Date.from(Instant.parse("2026-11-28T10:00:00Z")));
		properties.setHeader("tenant", "acme");
		properties.setHeader("attempt", 7);
		properties.setHeader("CC", List.of("copies"));
		return new Message(("{\"order\":\"" + id + "\"}").getBytes(StandardCharsets.UTF_8), properties);
	}

	private static void assertSameProperties(AMQP.BasicProperties actual, AMQP.BasicProperties expected) {
		assertThat(actual.getHeaders()).isEqualTo(expected.getHeaders());
		assertThat(actual).usingRecursiveComparison().ignoringFields("headers").isEqualTo(expected);
	}

	private static GetResponse awaitMessage(String queue, Duration atMost) {
		Channel channel = queues.broker().channel();
		return await().atMost(atMost)
			.pollInterval(Duration.ofMillis(20))
			.until(() -> get(channel, queue), (response) -> response != null);
	}

	private static @Nullable GetResponse get(Channel channel, String queue) throws IOException {
		return channel.basicGet(queue, true);
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

	}

}
