package io.github.tieredretry.broker;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import io.github.tieredretry.broker.RecordingConsumer.Delivery;
import io.github.tieredretry.testsupport.TestBroker;
import io.github.tieredretry.testsupport.TestQueues;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * What RabbitMQ 4.3's delayed retry for quorum queues does, measured with a plain AMQP
 * 0-9-1 client: which returns each type delays, by how much, how the broker counts them,
 * where delayed messages wait, and how the queue arguments are checked. Every test runs
 * on every broker of the matrix and asserts, before 4.3, what that broker does instead:
 * 3.10 and 4.0 accept the {@code x-delayed-retry-*} arguments, on any queue, and ignore
 * them. docs/delayed-retry.md states these facts and links here.
 * <p>
 * Timings are measured on the client, from the call that gives the message back to the
 * redelivery's arrival: never earlier than the delay, less a few milliseconds of clock
 * granularity (the broker computes due times in whole milliseconds), and late by at most
 * a generous second on a loaded machine. The delays of one message given back again and
 * again must also be late by at most {@link #MEDIAN_LATENESS} in the median: another
 * formula (a nack counted, another cap) makes most of them later than that, while a
 * loaded 2-core machine makes a few of them late by up to 270 ms, not most. Each run
 * prints how late its delays were.
 */
class DelayedRetryFactsIntegrationTests {

	static final String TYPE = "x-delayed-retry-type";

	static final String MIN = "x-delayed-retry-min";

	static final String MAX = "x-delayed-retry-max";

	static final String DELIVERY_COUNT = "x-delivery-count";

	static final String ACQUIRED_COUNT = "x-acquired-count";

	static final Duration GRANULARITY = Duration.ofMillis(5);

	static final Duration LATENESS = Duration.ofSeconds(1);

	static final Duration MEDIAN_LATENESS = Duration.ofMillis(50);

	/**
	 * How late each delayed redelivery of this run was: its delay and lateness, in µs.
	 */
	static final List<long[]> lateness = new CopyOnWriteArrayList<>();

	/** The median lateness of each series of delays of one message, in µs. */
	static final List<Long> seriesMedians = new CopyOnWriteArrayList<>();

	@RegisterExtension
	static final TestQueues queues = TestQueues.prefixed("delayed-retry");

	/** Whether the broker has delayed retry (4.3 or later). */
	static boolean delayedRetry;

	Connection connection;

	@BeforeAll
	static void brokerVersion() {
		delayedRetry = TestBroker.get().isAtLeast(4, 3);
	}

	@AfterAll
	static void printLateness() {
		if (!lateness.isEmpty()) {
			List<long[]> sorted = lateness.stream().sorted(Comparator.comparingLong((late) -> late[1])).toList();
			long[] latest = sorted.get(sorted.size() - 1);
			System.out.printf(Locale.ROOT,
					"[delayed-retry] %d delayed redeliveries on RabbitMQ %s, late by %.1f ms (median) and %.1f ms "
							+ "at most (a delay of %d ms); median lateness of a message's series %.1f ms at most, "
							+ "of %d ms allowed%n",
					sorted.size(), TestBroker.get().version(), sorted.get(sorted.size() / 2)[1] / 1000.0,
					latest[1] / 1000.0, latest[0] / 1000,
					seriesMedians.stream().mapToLong(Long::longValue).max().orElse(0) / 1000.0,
					MEDIAN_LATENESS.toMillis());
		}
	}

	@BeforeEach
	void connect() {
		this.connection = TestBroker.get().newConnection();
	}

	@AfterEach
	void disconnect() {
		this.connection.abort();
	}

	@ParameterizedTest(name = "{0} delays a {1}: {2}")
	@CsvSource({ "disabled, REJECT, false", "disabled, NACK, false", "disabled, CHANNEL_CLOSE, false",
			"all, REJECT, true", "all, NACK, true", "all, CHANNEL_CLOSE, true", "failed, REJECT, true",
			"failed, NACK, false", "failed, CHANNEL_CLOSE, true", "returned, REJECT, false", "returned, NACK, true",
			"returned, CHANNEL_CLOSE, false" })
	void eachTypeDelaysItsKindOfReturn(String type, Return how, boolean delayedOn43) throws Exception {
		Duration delay = Duration.ofMillis(500);
		String queue = quorumQueue("type-" + type + "-" + how, TYPE, type, MIN, 500, MAX, 500);
		RecordingConsumer first = consume(queue, 1);
		publish(queue, "m");
		Delivery delivered = first.delivery(1);
		RecordingConsumer next = first;
		long returned;
		if (how == Return.CHANNEL_CLOSE) {
			// Another consumer takes the message back from the closed channel.
			next = consume(queue, 1);
			returned = System.nanoTime();
			first.getChannel().close();
		}
		else {
			returned = System.nanoTime();
			how.giveBack(first.getChannel(), delivered);
		}
		Delivery again = next.delivery((how == Return.CHANNEL_CLOSE) ? 1 : 2);

		if (delayedRetry && delayedOn43) {
			assertDelayedBy(again.since(returned), delay);
		}
		else {
			assertNotDelayed(again.since(returned), delay);
		}
	}

	@Test
	void delayIsTheMinimumTimesTheDeliveryCountUpToTheMaximum() throws Exception {
		String queue = quorumQueue("formula", TYPE, "all", MIN, 200, MAX, 500);
		RecordingConsumer consumer = deliveredOnce(queue);

		// 200, 400, then 500 ms. With the count before the return the 2nd would be
		// early; without the maximum the 3rd to 8th would wait 600 to 1600 ms, and with
		// a cap 50 ms or more above 500 they would be late by 50 ms or more: the median.
		List<Duration> measured = new ArrayList<>();
		List<Duration> delays = new ArrayList<>();
		for (long count = 1; count <= 8; count++) {
			Redelivered again = giveBack(consumer, Return.REJECT);
			assertThat(again.delivery().count(DELIVERY_COUNT)).isEqualTo(count);
			measured.add(again.after());
			delays.add(Duration.ofMillis(Math.min(200 * count, 500)));
		}
		assertDelayedOnlyFrom43(measured, delays);
	}

	@Test
	void nackIsDelayedByTheMinimumTimesTheCountOfEarlierRejectsButAtLeastTheMinimum() throws Exception {
		String queue = quorumQueue("formula-nack", TYPE, "all", MIN, 200, MAX, 2000);
		RecordingConsumer consumer = deliveredOnce(queue);
		List<Return> returns = List.of(Return.NACK, Return.NACK, Return.REJECT, Return.REJECT, Return.NACK);
		// On 4.3 a nack counts nothing: 0 is taken as 1. Were nacks counted (or the
		// acquired count used), they would be 200, 400, 600, 800, 1000 ms: late by 400
		// ms in the median. With the count before the return the 4th would be early.
		List<Duration> delays = Stream.of(200, 200, 200, 400, 400).map(Duration::ofMillis).toList();

		List<Duration> measured = new ArrayList<>();
		for (Return how : returns) {
			measured.add(giveBack(consumer, how).after());
		}
		assertDelayedOnlyFrom43(measured, delays);
	}

	@Test
	void rejectRaisesTheDeliveryCountANackOnlyTheAcquiredCount() throws Exception {
		String queue = quorumQueue("counts");
		RecordingConsumer consumer = consume(queue, 1);
		publish(queue, "m");
		Delivery first = consumer.delivery(1);
		assertThat(first.redelivered()).isFalse();
		assertThat(first.headers()).doesNotContainKeys(DELIVERY_COUNT, ACQUIRED_COUNT);

		Delivery rejected = giveBack(consumer, Return.REJECT).delivery();
		Delivery nacked = giveBack(consumer, Return.NACK).delivery();
		Delivery rejectedAgain = giveBack(consumer, Return.REJECT).delivery();

		assertThat(List.of(rejected, nacked, rejectedAgain))
			.allSatisfy((again) -> assertThat(again.redelivered()).isTrue());
		if (delayedRetry) {
			assertThat(List.of(rejected, nacked, rejectedAgain)).extracting((again) -> again.count(DELIVERY_COUNT))
				.containsExactly(1L, 1L, 2L);
			assertThat(List.of(rejected, nacked, rejectedAgain)).extracting((again) -> again.count(ACQUIRED_COUNT))
				.containsExactly(1L, 2L, 3L);
		}
		else {
			// Every return counts, and there is no acquired count.
			assertThat(List.of(rejected, nacked, rejectedAgain)).extracting((again) -> again.count(DELIVERY_COUNT))
				.containsExactly(1L, 2L, 3L);
			assertThat(List.of(rejected, nacked, rejectedAgain))
				.allSatisfy((again) -> assertThat(again.headers()).doesNotContainKey(ACQUIRED_COUNT));
		}
	}

	@Test
	void delayedMessageHoldsNeitherTheQueuesHeadNorAPrefetchSlot() throws Exception {
		Duration delay = Duration.ofMillis(500);
		String queue = quorumQueue("head", TYPE, "all", MIN, 500, MAX, 500);
		RecordingConsumer consumer = consume(queue, 1);
		publish(queue, "a");
		Delivery a = consumer.delivery(1);
		long returned = System.nanoTime();
		Return.REJECT.giveBack(consumer.getChannel(), a);
		publish(queue, "b");

		Delivery second = consumer.delivery(2);
		if (delayedRetry) {
			// B was published after A was given back, into A's prefetch slot of 1.
			assertThat(second.body()).isEqualTo("b");
			assertNotDelayed(second.since(returned), delay);
			consumer.getChannel().basicAck(second.deliveryTag(), false);
			Delivery third = consumer.delivery(3);
			assertThat(third.body()).isEqualTo("a");
			assertDelayedBy(third.since(returned), delay);
		}
		else {
			assertThat(second.body()).isEqualTo("a");
			assertNotDelayed(second.since(returned), delay);
			consumer.getChannel().basicAck(second.deliveryTag(), false);
			assertThat(consumer.delivery(3).body()).isEqualTo("b");
		}
	}

	@Test
	void delayedMessagesComeBackWhenTheirDelaysEndNotInTheOrderTheyWereGivenBack() throws Exception {
		String queue = quorumQueue("order", TYPE, "all", MIN, 300, MAX, 1000);
		RecordingConsumer consumer = consume(queue, 10);
		publish(queue, "m1");
		publish(queue, "m2");
		Delivery m1 = consumer.delivery(1);
		Delivery m2 = consumer.delivery(2);
		// m1 once, so that its next reject counts 2 (600 ms) and m2's 1 (300 ms).
		Return.REJECT.giveBack(consumer.getChannel(), m1);
		m1 = consumer.delivery(3);

		long returned = System.nanoTime();
		Return.REJECT.giveBack(consumer.getChannel(), m1);
		Return.REJECT.giveBack(consumer.getChannel(), m2);
		publish(queue, "n");

		consumer.delivery(6);
		List<Delivery> after = consumer.deliveries().subList(3, 6);
		if (delayedRetry) {
			assertThat(after).extracting(Delivery::body).containsExactly("n", "m2", "m1");
			assertNotDelayed(after.get(0).since(returned), Duration.ofMillis(300));
			assertDelayedBy(after.get(1).since(returned), Duration.ofMillis(300));
			assertDelayedBy(after.get(2).since(returned), Duration.ofMillis(600));
		}
		else {
			assertThat(after).extracting(Delivery::body)
				.filteredOn((body) -> body.startsWith("m"))
				.containsExactly("m1", "m2");
			assertThat(after)
				.allSatisfy((delivery) -> assertNotDelayed(delivery.since(returned), Duration.ofMillis(300)));
		}
	}

	@Test
	void passiveDeclareCountsReadyMessagesOnlyAndPurgeRemovesDelayedOnesToo() throws Exception {
		String queue = quorumQueue("counted", TYPE, "all", MIN, 30_000, MAX, 30_000);
		Channel channel = this.connection.createChannel();
		channel.confirmSelect();
		for (String body : List.of("m1", "m2", "m3", "m4")) {
			channel.basicPublish("", queue, null, body.getBytes(StandardCharsets.UTF_8));
		}
		channel.waitForConfirmsOrDie(10_000);
		GetResponse m1 = channel.basicGet(queue, false);
		GetResponse m2 = channel.basicGet(queue, false);
		// m3 stays unacknowledged, m4 ready.
		channel.basicGet(queue, false);
		channel.basicReject(m1.getEnvelope().getDeliveryTag(), true);
		channel.basicReject(m2.getEnvelope().getDeliveryTag(), true);
		// Confirmed after the rejects, which this channel sent to the queue before it.
		channel.basicPublish("", queue, null, "m5".getBytes(StandardCharsets.UTF_8));
		channel.waitForConfirmsOrDie(10_000);

		if (delayedRetry) {
			// m4 and m5; not the delayed m1 and m2, nor the unacknowledged m3.
			assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(2);
			assertThat(channel.messageCount(queue)).isEqualTo(2);
			assertThat(channel.basicGet(queue, true)).isNotNull();
			assertThat(channel.basicGet(queue, true)).isNotNull();
			assertThat(channel.basicGet(queue, true)).as("a get while only delayed messages are left").isNull();
			assertThat(channel.queuePurge(queue).getMessageCount()).as("purged").isEqualTo(2);
		}
		else {
			assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(4);
			assertThat(channel.queuePurge(queue).getMessageCount()).as("purged").isEqualTo(4);
		}
	}

	@Test
	void deliveryLimitIsCheckedBeforeTheDelaySoTheLastRejectIsDeadLetteredAtOnce() throws Exception {
		Duration delay = Duration.ofMillis(300);
		DeadLettering limit = deadLettering("limit", TYPE, "all", MIN, 300, MAX, 300, "x-delivery-limit", 2);
		RecordingConsumer consumer = deliveredOnce(limit.queue());

		for (int i = 0; i < 2; i++) {
			Redelivered again = giveBack(consumer, Return.REJECT);
			if (delayedRetry) {
				assertDelayedBy(again.after(), delay);
			}
			else {
				assertNotDelayed(again.after(), delay);
			}
		}
		long returned = System.nanoTime();
		Return.REJECT.giveBack(consumer.getChannel(), consumer.delivery(3));
		Delivery deadLetter = limit.deadLetters().delivery(1);

		assertNotDelayed(deadLetter.since(returned), delay);
		assertThat(consumer.deliveries()).hasSize(3);
		assertThat(String.valueOf(deadLetter.headers().get("x-first-death-reason"))).isEqualTo("delivery_limit");
		assertThat(String.valueOf(deadLetter.headers().get("x-first-death-queue"))).isEqualTo(limit.queue());
	}

	@Test
	void nackNeverReachesTheDeliveryLimit() throws Exception {
		DeadLettering nackLimit = deadLettering("nack-limit", TYPE, "all", MIN, 100, MAX, 100, "x-delivery-limit", 1);
		RecordingConsumer consumer = deliveredOnce(nackLimit.queue());

		if (delayedRetry) {
			Delivery again = null;
			for (int i = 0; i < 4; i++) {
				again = giveBack(consumer, Return.NACK).delivery();
			}
			assertThat(again.count(ACQUIRED_COUNT)).isEqualTo(4);
			assertThat(again.headers()).doesNotContainKey(DELIVERY_COUNT);
			assertThat(nackLimit.deadLetters().deliveries()).isEmpty();
		}
		else {
			giveBack(consumer, Return.NACK);
			Return.NACK.giveBack(consumer.getChannel(), consumer.delivery(2));
			assertThat(String.valueOf(nackLimit.deadLetters().delivery(1).headers().get("x-first-death-reason")))
				.isEqualTo("delivery_limit");
		}
	}

	static Stream<Arguments> invalidOrIncompleteArguments() {
		return Stream.of(Arguments.of("an unknown type", quorum(TYPE, "bogus", MIN, 500, MAX, 500)),
				Arguments.of("the type in capitals", quorum(TYPE, "ALL", MIN, 500, MAX, 500)),
				Arguments.of("the type as a number", quorum(TYPE, 1, MIN, 500, MAX, 500)),
				Arguments.of("the minimum as text", quorum(TYPE, "all", MIN, "500", MAX, 500)),
				Arguments.of("the minimum as a double", quorum(TYPE, "all", MIN, 500.0, MAX, 500)),
				Arguments.of("a maximum and no minimum", quorum(TYPE, "all", MAX, 500)),
				Arguments.of("a minimum and maximum and no type", quorum(MIN, 500, MAX, 500)));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("invalidOrIncompleteArguments")
	void invalidOrIncompleteArgumentsAreAcceptedAndLeaveDelayedRetryDisabled(String description,
			Map<String, Object> arguments) throws Exception {
		String queue = queues.name("invalid-" + description.replace(' ', '-'));
		declare(queue, arguments);
		RecordingConsumer consumer = deliveredOnce(queue);

		assertNotDelayed(giveBack(consumer, Return.REJECT).after(), Duration.ofMillis(500));
		assertNotDelayed(giveBack(consumer, Return.NACK).after(), Duration.ofMillis(500));
	}

	@Test
	void minimumAloneIsAConstantDelay() throws Exception {
		String queue = quorumQueue("min-alone", TYPE, "all", MIN, 300);
		RecordingConsumer consumer = deliveredOnce(queue);

		// Were the delay to grow, it would be 600 to 1500 ms from the 2nd: late by 600 ms
		// in the median, and the 5th past the late bound of 1300 ms.
		List<Duration> measured = rejectedAgainAndAgain(consumer, 5);
		assertDelayedOnlyFrom43(measured, Collections.nCopies(5, Duration.ofMillis(300)));
	}

	@Test
	void maximumBelowTheMinimumCapsTheDelay() throws Exception {
		String queue = quorumQueue("max-below-min", TYPE, "all", MIN, 3000, MAX, 300);
		RecordingConsumer consumer = deliveredOnce(queue);

		assertDelayedOnlyFrom43(giveBack(consumer, Return.REJECT).after(), Duration.ofMillis(300));
	}

	@Test
	void invalidMaximumFallsBackToTheMinimum() throws Exception {
		String queue = quorumQueue("max-as-text", TYPE, "all", MIN, 200, MAX, "5000");
		RecordingConsumer consumer = deliveredOnce(queue);

		// With a maximum of 5000 they would be 400 to 1600 ms from the 2nd: late by 800
		// ms in the median, and the 8th past the late bound of 1200 ms.
		List<Duration> measured = rejectedAgainAndAgain(consumer, 8);
		assertDelayedOnlyFrom43(measured, Collections.nCopies(8, Duration.ofMillis(200)));
	}

	@Test
	void classicQueuesRefuseTheArgumentsFrom43() throws Exception {
		String queue = queues.name("classic");
		Map<String, Object> arguments = arguments("x-queue-type", "classic", TYPE, "all", MIN, 500, MAX, 500);

		if (delayedRetry) {
			assertThatThrownBy(() -> declare(queue, arguments))
				.hasStackTraceContaining("PRECONDITION_FAILED - invalid arg 'x-delayed-retry-")
				.hasStackTraceContaining("of queue type rabbit_classic_queue");
		}
		else {
			declare(queue, arguments);
			RecordingConsumer consumer = consume(queue, 1);
			publish(queue, "m");
			consumer.delivery(1);
			assertNotDelayed(giveBack(consumer, Return.REJECT).after(), Duration.ofMillis(500));
		}
	}

	@Test
	void argumentsAreEquivalenceCheckedFrom43() throws Exception {
		String queue = quorumQueue("equivalence", TYPE, "all", MIN, 500, MAX, 4000);
		String plain = quorumQueue("equivalence-plain");
		Map<String, Object> otherMinimum = quorum(TYPE, "all", MIN, 600, MAX, 4000);
		Map<String, Object> asLongs = quorum(TYPE, "all", MIN, 500L, MAX, 4000L);

		declare(queue, asLongs);
		if (delayedRetry) {
			assertThatThrownBy(() -> declare(queue, otherMinimum))
				.hasStackTraceContaining("PRECONDITION_FAILED - inequivalent arg 'x-delayed-retry-min' for queue '"
						+ queue + "' in vhost '/': received '600' but current is '500'");
			assertThatThrownBy(() -> declare(queue, quorum()))
				.hasStackTraceContaining("PRECONDITION_FAILED - inequivalent arg 'x-delayed-retry-")
				.hasStackTraceContaining("received none but current is");
			assertThatThrownBy(() -> declare(plain, otherMinimum))
				.hasStackTraceContaining("PRECONDITION_FAILED - inequivalent arg 'x-delayed-retry-");
		}
		else {
			declare(queue, otherMinimum);
			declare(queue, quorum());
			declare(plain, otherMinimum);
		}
	}

	@Test
	void amqp091CannotDelayASingleMessage() throws Exception {
		// The AMQP 1.0 annotation that delays one message, as an AMQP 0-9-1 header.
		Map<String, Object> headers = Map.of("x-opt-delivery-time", System.currentTimeMillis() + 2000);
		String queue = quorumQueue("header");
		RecordingConsumer consumer = consume(queue, 1);
		queues.broker()
			.publish("", queue, new AMQP.BasicProperties.Builder().headers(headers).build(),
					"m".getBytes(StandardCharsets.UTF_8));
		consumer.delivery(1);

		assertNotDelayed(giveBack(consumer, Return.REJECT).after(), Duration.ofMillis(2000));
		assertNotDelayed(giveBack(consumer, Return.NACK).after(), Duration.ofMillis(2000));
	}

	@Test
	void messageTtlExpiresADelayedMessageOnlyOnceItIsDue() throws Exception {
		Duration delay = Duration.ofMillis(2000);
		DeadLettering ttl = deadLettering("ttl", TYPE, "all", MIN, 2000, MAX, 2000, "x-message-ttl", 1000);
		RecordingConsumer consumer = consume(ttl.queue(), 1);
		long published = System.nanoTime();
		publish(ttl.queue(), "m");
		Delivery first = consumer.delivery(1);
		long returned = System.nanoTime();
		Return.REJECT.giveBack(consumer.getChannel(), first);

		if (delayedRetry) {
			Delivery deadLetter = ttl.deadLetters().delivery(1);
			assertThat(String.valueOf(deadLetter.headers().get("x-first-death-reason"))).isEqualTo("expired");
			// Not when its time to live ended, a second after it was published.
			assertDelayedBy(deadLetter.since(returned), delay);
			assertThat(consumer.deliveries()).hasSize(1);
		}
		else {
			assertThat(consumer.delivery(2).since(published)).isLessThan(Duration.ofMillis(1000));
			assertThat(ttl.deadLetters().deliveries()).isEmpty();
		}
	}

	@ParameterizedTest(name = "{0}: returned after the timeout with its delay: {1}")
	@CsvSource({ "disabled, false", "all, true", "failed, false", "returned, true" })
	void lateAckAfterAConsumerTimeoutIsIgnoredAndTheMessageGoesToTheCancelledConsumer(String type, boolean delayed)
			throws Exception {
		Duration delay = Duration.ofMillis(300);
		String queue = quorumQueue("timeout-" + type, TYPE, type, MIN, 300, MAX, 300);
		Channel channel = this.connection.createChannel();
		RecordingConsumer unknownConsumer = new RecordingConsumer(channel);
		// Else the Java client closes the connection on a delivery to a gone consumer.
		channel.setDefaultConsumer(unknownConsumer);
		RecordingConsumer slow = new RecordingConsumer(channel);
		channel.basicConsume(queue, false, "slow", false, false, Map.of("x-consumer-timeout", 1000), slow);
		long published = System.nanoTime();
		publish(queue, "m");
		Delivery first = slow.delivery(1);

		if (delayedRetry) {
			await().atMost(Duration.ofSeconds(10)).until(() -> slow.cancelled().containsKey("slow"));
			long cancelled = slow.cancelled().get("slow");
			channel.basicAck(first.deliveryTag(), false);
			Delivery again = unknownConsumer.delivery(1);
			assertThat(again.consumerTag()).isEqualTo("slow");
			// A timeout is a return, not a failure: not counted, delayed as a return.
			assertThat(again.count(ACQUIRED_COUNT)).isEqualTo(1);
			assertThat(again.headers()).doesNotContainKey(DELIVERY_COUNT);
			if (delayed) {
				// From before the publish: the timeout starts before the client has the
				// message (1293 ms from its arrival, in two runs on a loaded machine).
				assertThat(again.since(published))
					.isGreaterThanOrEqualTo(Duration.ofMillis(1000).plus(delay).minus(GRANULARITY));
				assertThat(again.since(cancelled)).isLessThanOrEqualTo(delay.plus(LATENESS));
			}
			else {
				assertNotDelayed(again.since(cancelled), delay);
			}
		}
		else {
			// No consumer timeout of its own before 4.3: the ack is not late. A window,
			// as no event stands for a cancellation that does not come: twice the
			// consumer's timeout (4.3 cancels within about 1.3 s).
			await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).until(() -> slow.cancelled().isEmpty());
			channel.basicAck(first.deliveryTag(), false);
			// A message still unacknowledged would go back to the queue.
			channel.close();
			try (Channel other = this.connection.createChannel()) {
				assertThat(other.queueDeclarePassive(queue).getMessageCount()).isZero();
			}
			assertThat(unknownConsumer.deliveries()).isEmpty();
		}
	}

	private static void assertDelayedBy(Duration measured, Duration delay) {
		lateness.add(new long[] { delay.toNanos() / 1000, measured.minus(delay).toNanos() / 1000 });
		assertThat(measured).as("redelivered after").isBetween(delay.minus(GRANULARITY), delay.plus(LATENESS));
	}

	/**
	 * Asserts that a message was back before a delay it would have had could have ended.
	 * @param measured how long it was away
	 * @param delay the delay it would have had
	 */
	private static void assertNotDelayed(Duration measured, Duration delay) {
		assertThat(measured).as("redelivered after").isLessThan(delay.minus(GRANULARITY));
	}

	private static void assertDelayedOnlyFrom43(Duration measured, Duration delay) {
		if (delayedRetry) {
			assertDelayedBy(measured, delay);
		}
		else {
			assertNotDelayed(measured, delay);
		}
	}

	/**
	 * Asserts the delays of one message given back again and again: from 4.3 each as
	 * {@link #assertDelayedBy}, and late by at most {@link #MEDIAN_LATENESS} in the
	 * median; before, none delayed.
	 * @param measured how long it was away each time
	 * @param delays the delays it should have had
	 */
	private static void assertDelayedOnlyFrom43(List<Duration> measured, List<Duration> delays) {
		if (!delayedRetry) {
			assertThat(measured).allSatisfy((away) -> assertNotDelayed(away, Collections.min(delays)));
			return;
		}
		List<Duration> late = new ArrayList<>();
		for (int i = 0; i < measured.size(); i++) {
			assertDelayedBy(measured.get(i), delays.get(i));
			late.add(measured.get(i).minus(delays.get(i)));
		}
		Duration median = late.stream().sorted().toList().get(late.size() / 2);
		seriesMedians.add(median.toNanos() / 1000);
		assertThat(median).as("median lateness of %s after delays of %s", measured, delays)
			.isLessThanOrEqualTo(MEDIAN_LATENESS);
	}

	/**
	 * Give the consumer's latest delivery back and wait for it to come again.
	 * @param consumer the consumer
	 * @param how how to give it back
	 * @return the redelivery and how long after the return it arrived
	 */
	private Redelivered giveBack(RecordingConsumer consumer, Return how) throws IOException {
		int delivered = consumer.deliveries().size();
		Delivery latest = consumer.delivery(delivered);
		long returned = System.nanoTime();
		how.giveBack(consumer.getChannel(), latest);
		Delivery again = consumer.delivery(delivered + 1);
		return new Redelivered(again, again.since(returned));
	}

	/**
	 * A consumer (prefetch 1) of the queue, holding its first delivery of a message
	 * published for it.
	 * @param queue the queue
	 * @return the consumer
	 */
	private RecordingConsumer deliveredOnce(String queue) throws IOException {
		RecordingConsumer consumer = consume(queue, 1);
		publish(queue, "m");
		consumer.delivery(1);
		return consumer;
	}

	/**
	 * Reject the consumer's message again and again, each time once it is back.
	 * @param consumer the consumer
	 * @param times how many times
	 * @return how long it was away each time
	 */
	private List<Duration> rejectedAgainAndAgain(RecordingConsumer consumer, int times) throws IOException {
		List<Duration> measured = new ArrayList<>();
		for (int i = 0; i < times; i++) {
			measured.add(giveBack(consumer, Return.REJECT).after());
		}
		return measured;
	}

	private String quorumQueue(String role, Object... arguments) throws IOException, TimeoutException {
		String queue = queues.name(role);
		declare(queue, quorum(arguments));
		return queue;
	}

	/**
	 * A quorum queue whose dead letters go to a classic queue of their own, and a
	 * consumer of the dead letters.
	 * @param role what the queue is for
	 * @param arguments the quorum queue's other arguments
	 * @return the queue and the consumer
	 */
	private DeadLettering deadLettering(String role, Object... arguments) throws IOException, TimeoutException {
		String deadLetters = classicQueue(role + "-dead-letters");
		Map<String, Object> withDeadLetters = quorum(arguments);
		withDeadLetters.put("x-dead-letter-exchange", "");
		withDeadLetters.put("x-dead-letter-routing-key", deadLetters);
		String queue = queues.name(role);
		declare(queue, withDeadLetters);
		return new DeadLettering(queue, consume(deadLetters, 10));
	}

	private String classicQueue(String role) throws IOException, TimeoutException {
		String queue = queues.name(role);
		declare(queue, Map.of());
		return queue;
	}

	private void declare(String queue, Map<String, Object> arguments) throws IOException, TimeoutException {
		try (Channel channel = this.connection.createChannel()) {
			channel.queueDeclare(queue, true, false, false, arguments);
		}
	}

	private RecordingConsumer consume(String queue, int prefetch) throws IOException {
		Channel channel = this.connection.createChannel();
		channel.basicQos(prefetch);
		RecordingConsumer consumer = new RecordingConsumer(channel);
		channel.basicConsume(queue, false, consumer);
		return consumer;
	}

	private void publish(String queue, String body) {
		queues.broker().publish("", queue, new AMQP.BasicProperties(), body.getBytes(StandardCharsets.UTF_8));
	}

	static Map<String, Object> quorum(Object... keysAndValues) {
		Map<String, Object> arguments = arguments("x-queue-type", "quorum");
		arguments.putAll(arguments(keysAndValues));
		return arguments;
	}

	static Map<String, Object> arguments(Object... keysAndValues) {
		Map<String, Object> arguments = new LinkedHashMap<>();
		for (int i = 0; i < keysAndValues.length; i += 2) {
			arguments.put((String) keysAndValues[i], keysAndValues[i + 1]);
		}
		return arguments;
	}

	/**
	 * How a consumer gives a message back to its queue over AMQP 0-9-1.
	 */
	enum Return {

		/** {@code basic.reject(requeue=true)}: a failed delivery on 4.3. */
		REJECT,

		/** {@code basic.nack(requeue=true)}: a return on 4.3, not a failure. */
		NACK,

		/**
		 * Closing the channel that holds the message unacknowledged: a failure on 4.3.
		 */
		CHANNEL_CLOSE;

		void giveBack(Channel channel, Delivery delivery) throws IOException {
			switch (this) {
				case REJECT -> channel.basicReject(delivery.deliveryTag(), true);
				case NACK -> channel.basicNack(delivery.deliveryTag(), false, true);
				case CHANNEL_CLOSE -> {
					try {
						channel.close();
					}
					catch (TimeoutException ex) {
						throw new IOException(ex);
					}
				}
			}
		}

	}

	/**
	 * A quorum queue that dead-letters to a queue of its own.
	 *
	 * @param queue the quorum queue
	 * @param deadLetters the consumer of its dead letters
	 */
	record DeadLettering(String queue, RecordingConsumer deadLetters) {

	}

	/**
	 * A message that came back.
	 *
	 * @param delivery the redelivery
	 * @param after how long after it was given back it arrived
	 */
	record Redelivered(Delivery delivery, Duration after) {

	}

}
