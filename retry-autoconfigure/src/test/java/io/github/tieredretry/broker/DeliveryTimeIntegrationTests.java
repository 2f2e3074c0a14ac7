package io.github.tieredretry.broker;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongFunction;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.amqp.AmqpException;
import com.rabbitmq.client.amqp.Connection;
import com.rabbitmq.client.amqp.Consumer;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.Management;
import com.rabbitmq.client.amqp.Message;
import com.rabbitmq.client.amqp.Publisher;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import io.github.tieredretry.testsupport.TestBroker;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A per-message delivery time on RabbitMQ 4.3 quorum queues, as the RabbitMQ AMQP 1.0
 * Java client sends it: {@code Consumer.Context.requeue(annotations)} settles with the
 * {@code modified} outcome, and its message annotation {@code x-opt-delivery-time} (an
 * absolute time, in epoch milliseconds) holds the message until then, whatever the
 * queue's delayed retry says, without counting towards its delivery limit. 4.0 ignores
 * the annotation (and counts every return); 3.10 does not speak AMQP 1.0 on its AMQP port
 * without a plugin, and the client refuses it. Every test runs on every broker of the
 * matrix and asserts what that broker does: on 3.10 that is one fact for all of them, the
 * client's refusal. docs/delayed-retry.md states these facts and links here.
 */
class DeliveryTimeIntegrationTests {

	static final String DELIVERY_TIME = "x-opt-delivery-time";

	static final Duration GRANULARITY = Duration.ofMillis(5);

	static final Duration LATENESS = Duration.ofSeconds(1);

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("delivery-time");

	/** Whether the broker speaks AMQP 1.0 to the client (4.0 or later). */
	static boolean amqp10;

	/** Whether the broker honours a delivery time (4.3 or later). */
	static boolean deliveryTime;

	Environment environment;

	@BeforeAll
	static void brokerVersion() {
		amqp10 = TestBroker.get().isAtLeast(4, 0);
		deliveryTime = TestBroker.get().isAtLeast(4, 3);
	}

	@BeforeEach
	void environment() {
		TestBroker broker = TestBroker.get();
		this.environment = new AmqpEnvironmentBuilder().connectionSettings()
			.host(broker.host())
			.port(broker.port())
			.username(broker.username())
			.password(broker.password())
			.environmentBuilder()
			.build();
	}

	@AfterEach
	void closeEnvironment() {
		this.environment.close();
	}

	@AfterAll
	static void sayWhatWasAsserted() {
		if (!amqp10) {
			System.out.println("[delivery-time] RabbitMQ " + TestBroker.get().version() + ": every test of this "
					+ "class asserted one fact, that the AMQP 1.0 client is refused");
		}
	}

	@Test
	void theClientNeedsRabbitMq40() {
		if (amqp10) {
			try (Connection connection = this.environment.connectionBuilder().build()) {
				assertThat(connection.management().queueInfo(quorumQueue("any")).type())
					.isEqualTo(Management.QueueType.QUORUM);
			}
		}
		else {
			assertRefused();
		}
	}

	@ParameterizedTest(name = "delayed retry {0}")
	@ValueSource(strings = { "absent", "disabled", "failed" })
	void requeueWithADeliveryTimeIsRedeliveredThenWhateverTheQueuesDelayedRetry(String type) throws Exception {
		String queue = (type.equals("absent")) ? quorumQueue("exact-absent") : quorumQueue("exact-" + type,
				"x-delayed-retry-type", type, "x-delayed-retry-min", 100, "x-delayed-retry-max", 100);
		Duration ahead = Duration.ofMillis(600);
		whenTheClientConnects((connection) -> assertHeldUntilItsDeliveryTimeFrom43(requeued(connection, queue, ahead)));
	}

	@Test
	void deliveryTimeIsNotCappedByTheQueuesMaximum() throws Exception {
		String queue = quorumQueue("not-capped", "x-delayed-retry-type", "all", "x-delayed-retry-min", 200,
				"x-delayed-retry-max", 200);
		whenTheClientConnects((connection) -> {
			Requeued requeued = requeued(connection, queue, Duration.ofMillis(1500));
			if (deliveryTime) {
				assertArrivedAt(requeued.again(), requeued.deliverAt());
			}
			else {
				assertThat(requeued.again().since(requeued.requeuedNanos())).isLessThan(Duration.ofMillis(200));
			}
		});
	}

	@Test
	void deliveryTimeShortensALongerQueueDelay() throws Exception {
		String queue = quorumQueue("shorter", "x-delayed-retry-type", "all", "x-delayed-retry-min", 3000,
				"x-delayed-retry-max", 3000);
		// The queue's delay would end 3 s after the requeue, past the late bound.
		Duration ahead = Duration.ofMillis(300);
		whenTheClientConnects((connection) -> assertHeldUntilItsDeliveryTimeFrom43(requeued(connection, queue, ahead)));
	}

	@Test
	void requeuesWithADeliveryTimeNeverCountTowardsTheDeliveryLimit() throws Exception {
		String deadLetters = queues.name("limit-dead-letters");
		queues.broker().declareQueue(deadLetters);
		String queue = quorumQueue("limit", "x-delivery-limit", 2, "x-dead-letter-exchange", "",
				"x-dead-letter-routing-key", deadLetters);
		whenTheClientConnects((connection) -> {
			Recorder recorder = consumingOneMessage(connection, queue);
			if (deliveryTime) {
				for (int i = 1; i <= 4; i++) {
					long deliverAt = System.currentTimeMillis() + 200;
					recorder.delivery(i).context().requeue(Map.of(DELIVERY_TIME, deliverAt));
					// Held until then: a requeue with a delivery time, not a plain one.
					assertArrivedAt(recorder.delivery(i + 1), deliverAt);
				}
				Message again = recorder.delivery(5).message();
				assertThat(count(again, "x-acquired-count")).isEqualTo(4L);
				assertThat(again.hasAnnotation("x-delivery-count")).isFalse();
				assertThat(again.deliveryCount()).isZero();
				assertThat(queues.broker().count(deadLetters)).isZero();
			}
			else {
				// Every return counts: dead-lettered on the 3rd with a limit of 2.
				for (int i = 1; i <= 3; i++) {
					recorder.delivery(i).context().requeue(Map.of(DELIVERY_TIME, System.currentTimeMillis() + 100));
				}
				await().atMost(Duration.ofSeconds(10)).until(() -> queues.broker().count(deadLetters) == 1);
				assertThat(recorder.received()).hasSize(3)
					.extracting((received) -> count(received.message(), "x-delivery-count"))
					.containsExactly(null, 1L, 2L);
			}
		});
	}

	@Test
	void deliveryTimeIsAnAbsoluteTimeInMilliseconds() throws Exception {
		String queue = quorumQueue("absolute");
		whenTheClientConnects((connection) -> {
			Recorder recorder = consumingOneMessage(connection, queue);
			// Each, computed from now, would hold the message 2 s or more past now if the
			// broker took it as a delay (3 s), as the time in text (3 s ahead), or in
			// seconds
			// (3 s ahead, less up to 1 s the division drops).
			List<LongFunction<Object>> notTimes = List.of((now) -> 3000L, (now) -> Long.toString(now + 3000),
					(now) -> (int) ((now + 3000) / 1000));

			for (int i = 0; i < notTimes.size(); i++) {
				long now = System.currentTimeMillis();
				Object notATime = notTimes.get(i).apply(now);
				recorder.delivery(i + 1).context().requeue(Map.of(DELIVERY_TIME, notATime));
				assertArrivedBefore(recorder.delivery(i + 2), now + 2000);
			}
		});
	}

	@Test
	void deliveryTimeStaysOnTheMessageButDelaysOnlyTheRequeueThatSetIt() throws Exception {
		String queue = quorumQueue("stays");
		whenTheClientConnects((connection) -> {
			Requeued requeued = requeued(connection, queue, Duration.ofMillis(300));
			Recorder recorder = requeued.recorder();
			long deliverAt = requeued.deliverAt();
			Received again = requeued.again();
			assertThat(count(again.message(), DELIVERY_TIME)).isEqualTo(deliverAt);

			again.context().requeue();
			Received third = recorder.delivery(3);
			assertThat(count(third.message(), DELIVERY_TIME)).isEqualTo(deliverAt);
			third.context().accept();

			// Its time has passed by then. A time still ahead delays no plain requeue
			// either:
			// a message that carries one from its publisher (which delays nothing
			// itself).
			long ahead = System.currentTimeMillis() + 3000;
			publishWithDeliveryTime(connection, queue, ahead);
			Received published = recorder.delivery(4);
			published.context().requeue();
			Received requeuedAgain = recorder.delivery(5);
			assertThat(count(requeuedAgain.message(), DELIVERY_TIME)).isEqualTo(ahead);
			assertArrivedBefore(requeuedAgain, ahead);
		});
	}

	@Test
	void publishersDeliveryTimeDelaysNothing() throws Exception {
		String queue = quorumQueue("publisher");
		whenTheClientConnects((connection) -> {
			Recorder recorder = consume(connection, queue);
			long deliverAt = System.currentTimeMillis() + 2000;
			publishWithDeliveryTime(connection, queue, deliverAt);

			assertArrivedBefore(recorder.delivery(1), deliverAt);
		});
	}

	@Test
	void managementShowsTheQueueArgumentsAndCountsReadyMessagesOnly() throws Exception {
		String queue = queues.name("management");
		whenTheClientConnects((connection) -> {
			Management management = connection.management();
			management.queue(queue)
				.quorum()
				.delayedRetryType(Management.DelayedRetryType.ALL)
				.delayedRetryMin(Duration.ofSeconds(30))
				.delayedRetryMax(Duration.ofSeconds(60))
				.queue()
				.declare();
			assertThat(management.queueInfo(queue).arguments()).containsEntry("x-delayed-retry-type", "all")
				.containsEntry("x-delayed-retry-min", 30_000L)
				.containsEntry("x-delayed-retry-max", 60_000L);

			publish(queue, "m1");
			publish(queue, "m2");
			try (com.rabbitmq.client.Connection client = TestBroker.get().newConnection();
					Channel channel = client.createChannel()) {
				GetResponse m1 = channel.basicGet(queue, false);
				channel.basicReject(m1.getEnvelope().getDeliveryTag(), true);
				// Delayed for 30 s on 4.3, ready again at once before.
				await().atMost(Duration.ofSeconds(10))
					.until(() -> management.queueInfo(queue).messageCount() == (deliveryTime ? 1 : 2));
				channel.queuePurge(queue);
			}
		});
	}

	/**
	 * Run a test with a connection of the AMQP 1.0 client; before RabbitMQ 4.0, assert
	 * instead that the client cannot connect.
	 * @param test the test
	 * @throws Exception what the test throws
	 */
	private void whenTheClientConnects(Amqp10Test test) throws Exception {
		if (!amqp10) {
			assertRefused();
			return;
		}
		try (Connection connection = this.environment.connectionBuilder().build()) {
			test.run(connection);
		}
	}

	/**
	 * RabbitMQ 3.10 answers an AMQP 1.0 protocol header with its AMQP 0-9-1 header unless
	 * the {@code rabbitmq_amqp1_0} plugin is enabled; with the plugin, the client would
	 * refuse the broker for its version ("requires RabbitMQ 4.0 or more").
	 */
	private void assertRefused() {
		assertThatThrownBy(() -> this.environment.connectionBuilder().build().close())
			.isInstanceOf(AmqpException.AmqpConnectionException.class)
			.hasMessageContaining("Error on validation of header")
			.hasRootCauseMessage("Invalid Major version specified 0 : expected 1");
	}

	private static void assertArrivedAt(Received received, long deliverAt) {
		assertThat(received.arrivedMillis()).as("arrived, in epoch ms")
			.isBetween(deliverAt - GRANULARITY.toMillis(), deliverAt + LATENESS.toMillis());
	}

	/**
	 * Asserts that a message was not held until a time: it arrived before it.
	 * @param received the message
	 * @param time the time, in epoch milliseconds, it would have been held until
	 */
	private static void assertArrivedBefore(Received received, long time) {
		assertThat(received.arrivedMillis()).as("arrived, in epoch ms").isLessThan(time - GRANULARITY.toMillis());
	}

	private static void publishWithDeliveryTime(Connection connection, String queue, long deliverAt) {
		try (Publisher publisher = connection.publisherBuilder().queue(queue).build()) {
			Message message = publisher.message("m".getBytes(StandardCharsets.UTF_8))
				.annotation(DELIVERY_TIME, deliverAt);
			AtomicReference<Publisher.Status> status = new AtomicReference<>();
			publisher.publish(message, (context) -> status.set(context.status()));
			await().atMost(Duration.ofSeconds(10)).until(() -> status.get() != null);
			assertThat(status.get()).isEqualTo(Publisher.Status.ACCEPTED);
		}
	}

	/**
	 * A numeric annotation, whatever AMQP type the broker gave it.
	 * @param message the message
	 * @param annotation the annotation
	 * @return its value, or {@code null} when the message does not have it
	 */
	private static Long count(Message message, String annotation) {
		Object value = message.annotation(annotation);
		return (value != null) ? ((Number) value).longValue() : null;
	}

	private static String quorumQueue(String role, Object... arguments) {
		String queue = queues.name(role);
		queues.broker().declareQueue(queue, DelayedRetryFactsIntegrationTests.quorum(arguments));
		return queue;
	}

	private static void publish(String queue, String body) {
		queues.broker().publish("", queue, new AMQP.BasicProperties(), body.getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * A consumer of the queue, and a message published to it.
	 * @param connection the AMQP 1.0 connection
	 * @param queue the queue
	 * @return what the consumer receives
	 */
	private static Recorder consumingOneMessage(Connection connection, String queue) {
		Recorder recorder = consume(connection, queue);
		publish(queue, "m");
		return recorder;
	}

	/**
	 * A message published to the queue, requeued on its first delivery with a delivery
	 * time, and delivered again.
	 * @param connection the AMQP 1.0 connection
	 * @param queue the queue
	 * @param in how far ahead the delivery time is
	 * @return the redelivery
	 */
	private static Requeued requeued(Connection connection, String queue, Duration in) {
		Recorder recorder = consumingOneMessage(connection, queue);
		long deliverAt = System.currentTimeMillis() + in.toMillis();
		long requeued = System.nanoTime();
		recorder.delivery(1).context().requeue(Map.of(DELIVERY_TIME, deliverAt));
		return new Requeued(recorder, recorder.delivery(2), deliverAt, requeued);
	}

	/**
	 * Asserts that a requeued message was held until its delivery time from 4.3, and came
	 * back before it on an earlier broker.
	 * @param requeued the redelivery
	 */
	private static void assertHeldUntilItsDeliveryTimeFrom43(Requeued requeued) {
		if (deliveryTime) {
			assertArrivedAt(requeued.again(), requeued.deliverAt());
		}
		else {
			assertArrivedBefore(requeued.again(), requeued.deliverAt());
		}
	}

	private static Recorder consume(Connection connection, String queue) {
		Recorder recorder = new Recorder();
		connection.consumerBuilder().queue(queue).initialCredits(10).messageHandler(recorder).build();
		return recorder;
	}

	@FunctionalInterface
	interface Amqp10Test {

		void run(Connection connection) throws Exception;

	}

	/**
	 * An AMQP 1.0 message as a consumer received it, unsettled.
	 *
	 * @param message the message
	 * @param context what settles it
	 * @param arrivedMillis when it arrived, in epoch milliseconds
	 * @param arrivedNanos when it arrived ({@link System#nanoTime()})
	 */
	record Received(Message message, Consumer.Context context, long arrivedMillis, long arrivedNanos) {

		Duration since(long nanos) {
			return Duration.ofNanos(this.arrivedNanos - nanos);
		}

	}

	/**
	 * A message requeued with a delivery time, delivered again.
	 *
	 * @param recorder what its consumer received
	 * @param again the redelivery
	 * @param deliverAt the delivery time, in epoch milliseconds
	 * @param requeuedNanos when it was requeued ({@link System#nanoTime()})
	 */
	record Requeued(Recorder recorder, Received again, long deliverAt, long requeuedNanos) {

	}

	/**
	 * Records what an AMQP 1.0 consumer receives.
	 */
	static final class Recorder implements Consumer.MessageHandler {

		private final List<Received> received = new CopyOnWriteArrayList<>();

		@Override
		public void handle(Consumer.Context context, Message message) {
			this.received.add(new Received(message, context, System.currentTimeMillis(), System.nanoTime()));
		}

		Received delivery(int number) {
			await().atMost(Duration.ofSeconds(15))
				.pollInterval(Duration.ofMillis(10))
				.until(() -> this.received.size() >= number);
			return this.received.get(number - 1);
		}

		List<Received> received() {
			return this.received;
		}

	}

}
