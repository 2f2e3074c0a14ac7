package io.github.tieredretry.reliability.conditions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import io.github.tieredretry.delayedsend.DelayedSendException;
import io.github.tieredretry.delayedsend.DelayedSender;
import io.github.tieredretry.internal.delayedsend.ScheduledCounts;
import io.github.tieredretry.testbrokers.HarnessBroker;
import io.github.tieredretry.testbrokers.HarnessBrokers;
import io.github.tieredretry.testsupport.TestApplications;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Delayed sends across a restart of the broker: messages that {@link DelayedSender} put
 * in the (quorum) tiers before the node goes down, whether their delay ends while it is
 * down or starting again or long after, all reach their target once it is back, never
 * early, with body and headers as sent. The application keeps running through the restart
 * and reconnects by itself (Spring AMQP's recovery); a clean restart of the RabbitMQ
 * application and a crash of the node (SIGKILL) each get a test.
 * <p>
 * The contract is at-least-once: a publish the broker took whose confirm, or the
 * acknowledgement of the delivery that led to it, the outage lost, and a dead-lettering
 * out of a tier whose settlement it lost, are made again once the node is back.
 * Duplicates are counted and bounded; lost or early messages fail the tests.
 * <p>
 * Delayed sends go on while the node goes down and comes back: those the sender confirmed
 * arrive like the others; those it reported as failed are counted (one whose confirm
 * alone was lost may arrive all the same, never early) and sending works again once the
 * node is back.
 * <p>
 * On a node of its own, which the tests restart (never the shared broker on 5672); the
 * version comes from {@code -Drabbitmq.version} (the machine's 3.10 by default).
 */
class DelayedSendRestartIntegrationTests {

	static final String APPLICATION = "reminders";

	static final String TARGET_EXCHANGE = "reminders.target";

	static final String TARGET_QUEUE = "reminders.due";

	static final String ROUTING_KEY = "reminder.due";

	static final String SCHEDULED_QUEUE = "retry.scheduled." + APPLICATION;

	static final String PARKING_LOT = "retry.parking-lot." + APPLICATION;

	/**
	 * A delay of more than 10 s is several hops: 20 s is 10s and 10s, 16 s 10s, 5s and
	 * 1s.
	 */
	static final String TIERS = "1s, 5s, 10s";

	/**
	 * Delays that end while the node is down or starting again, or while the application
	 * reconnects: one every 250 ms up to 8 s, on their way through the 1s tier and the
	 * scheduled queue at every moment of the outage.
	 */
	static final List<Duration> ENDING_SOON = IntStream.rangeClosed(1, 32)
		.mapToObj((step) -> Duration.ofMillis(250L * step))
		.toList();

	/**
	 * Delays that end after the node is back, waiting in the 5s and 10s tiers meanwhile:
	 * several hops each (16 s: 10s, 5s, 1s).
	 */
	static final List<Duration> ENDING_AFTER = List.of(Duration.ofSeconds(12), Duration.ofSeconds(16),
			Duration.ofSeconds(20));

	/**
	 * Delayed sends published one every {@link #BURST_PACE} right before the outage, each
	 * due 0.5 to 3 s later: when the node goes, dozens a second come back from the 1s
	 * tier to the scheduled queue's consumer, which moves each on (the next hop, or the
	 * target) and acknowledges it once that publish is confirmed; the outage catches some
	 * of them in between.
	 */
	static final int BURST = 200;

	static final Duration BURST_SPREAD = Duration.ofMillis(2500);

	static final Duration BURST_PACE = Duration.ofMillis(10);

	/**
	 * How late a message may be past its due time (or the restart, when it was due while
	 * the node was down): the smallest tier, the listener container's recovery interval
	 * (5 s) and a loaded machine.
	 */
	static final Duration LATENESS = Duration.ofSeconds(20);

	static HarnessBroker broker;

	static ConfigurableApplicationContext application;

	static TargetConsumer target;

	/** The node's RabbitMQ version, for the report. */
	static String version;

	@BeforeAll
	static void startNodeAndApplication() throws Exception {
		Path work = Path.of(System.getProperty("reliability.work-dir", "target/fault-run"))
			.resolve("delayed-send")
			.toAbsolutePath();
		broker = HarnessBrokers.start(work);
		try (Connection connection = broker.connect("/", "declare-target");
				Channel channel = connection.createChannel()) {
			version = String.valueOf(connection.getServerProperties().get("version"));
			channel.exchangeDeclare(TARGET_EXCHANGE, BuiltinExchangeType.DIRECT, true);
			channel.queueDeclare(TARGET_QUEUE, true, false, false, Map.of("x-queue-type", "quorum"));
			channel.queueBind(TARGET_QUEUE, TARGET_EXCHANGE, ROUTING_KEY);
		}
		Map<String, Object> properties = ConditionsBroker.applicationProperties(broker, "/");
		properties.put("spring.application.name", APPLICATION);
		properties.put("retry.tiers", TIERS);
		application = TestApplications.run(App.class, properties);
		assertThat(queueTypes()).as("quorum tiers (the default) and scheduled queue")
			.containsEntry("retry.delay.1s", "quorum")
			.containsEntry("retry.delay.5s", "quorum")
			.containsEntry("retry.delay.10s", "quorum")
			.containsEntry(SCHEDULED_QUEUE, "quorum");
		// A quorum queue declared seconds before a SIGKILL comes back empty ("member not
		// found ... starting as a new one"): the node has not saved its Ra member yet.
		// A clean restart saves it; that is not what these tests are about
		// (DelayedRetryRestartIntegrationTests).
		broker.restartApplication();
		target = TargetConsumer.start(broker, TARGET_QUEUE);
		// Back: a delayed send due at once reaches the target (the application has
		// reconnected, its scheduled queue is consumed again).
		await().atMost(Duration.ofSeconds(60))
			.pollInterval(Duration.ofMillis(500))
			.ignoreExceptions()
			.untilAsserted(() -> {
				sender().send(TARGET_EXCHANGE, ROUTING_KEY, message("ready", 0), Duration.ZERO);
				await().atMost(Duration.ofSeconds(5)).until(() -> target.has("ready"));
			});
	}

	@AfterAll
	static void stopAll() throws InterruptedException {
		try {
			if (target != null) {
				target.close();
			}
			if (application != null) {
				application.close();
			}
		}
		finally {
			if (broker != null) {
				broker.close();
			}
		}
	}

	@Test
	void delayedSendsSurviveACleanRestartOfTheNode() throws Exception {
		sendThenBreak("restart", broker::restartApplication);
	}

	@Test
	void delayedSendsSurviveACrashOfTheNode() throws Exception {
		sendThenBreak("crash", broker::crashAndRestart);
	}

	private void sendThenBreak(String run, Runnable outage) throws Exception {
		List<Sent> sent = new ArrayList<>();
		List<Duration> delays = new ArrayList<>(ENDING_SOON);
		delays.addAll(ENDING_AFTER);
		for (int i = 0; i < delays.size(); i++) {
			sent.add(send(run + "-" + i, i, delays.get(i), i % 2 == 0));
		}
		sent.addAll(sendBurst(run));
		OutageSends during = OutageSends.start(run);
		long down = System.currentTimeMillis();
		outage.run();
		long up = System.currentTimeMillis();
		assertThat(during.stopOnceConfirmedAfter(up, Duration.ofSeconds(30)))
			.as("a delayed send confirmed once the node is back (the application reconnects by itself)")
			.isTrue();
		assertThat(sent).as("due while the node was down or starting (%s ms to %s ms)", down, up)
			.anyMatch((message) -> message.isDueBetween(down, up));
		assertThat(sent).as("waiting in the tiers when the node was back")
			.anyMatch((message) -> message.isDueAfter(up));
		// What the sender confirmed while the node went down and came back is scheduled
		// as well.
		sent.addAll(during.confirmed());

		List<String> ids = sent.stream().map(Sent::id).toList();
		Instant lastDue = sent.stream().map(Sent::due).max(Instant::compareTo).orElseThrow();
		// On a timeout the assertions below name what is missing.
		awaitQuietly(Duration.between(Instant.now(), lastDue).plus(LATENESS).plusSeconds(10),
				() -> ids.stream().allMatch(target::has));
		// Nothing left in the tiers or the scheduled queue, nothing parked; then a quiet
		// while for copies still on their way to show up: no delivery for 3 s.
		awaitQuietly(Duration.ofSeconds(30), () -> retryDepths().values().stream().allMatch((depth) -> depth == 0));
		await().atMost(Duration.ofSeconds(30)).until(() -> target.quietFor(Duration.ofSeconds(3)));

		Report report = new Report(run, down, up, sent, during.refused(), target.deliveries());
		System.out.println(report);
		for (Sent message : sent) {
			List<Delivery> copies = report.copiesOf(message);
			assertThat(copies).as("%s: arrived (none lost)%n%s", message.id(), report).isNotEmpty();
			assertAsSent(message, copies, report);
			assertThat(copies.get(0).epochMillis())
				.as("%s: first arrival (epoch ms), late by at most %s%n%s", message.id(), LATENESS, report)
				.isLessThanOrEqualTo(Math.max(message.due().toEpochMilli(), up) + LATENESS.toMillis());
			// At-least-once: when the broker took a publish (the next hop, or the
			// target) but the outage lost its confirm, or the acknowledgement of the
			// delivery from the scheduled queue that led to it, that delivery goes back
			// to the scheduled queue (given back by the starter, or redelivered by the
			// broker) and moves on again; when it lost the settlement of a dead-lettering
			// out of a tier, the broker dead-letters the message again (at-least-once
			// dead-lettering). One outage adds at most one copy of each kind to a
			// message: the original and two more. Seen: a copy or two in some runs,
			// arriving milliseconds apart once the application has reconnected.
			assertThat(copies).as("%s: copies after one outage%n%s", message.id(), report).hasSizeLessThanOrEqualTo(3);
		}
		// A send the sender reported as failed may have reached the broker all the same
		// (only its confirm was lost): it may arrive, but never early, and as sent.
		for (Sent message : during.refused().keySet()) {
			assertAsSent(message, report.copiesOf(message), report);
		}
		assertThat(retryDepths()).as("messages left in the tiers, the scheduled queue and the parking lot")
			.allSatisfy((queue, depth) -> assertThat(depth).as(queue).isZero());
		assertThat(bean(ScheduledCounts.class).total()).as("delayed sends counted as waiting").isZero();
	}

	private static void awaitQuietly(Duration timeout, Callable<Boolean> condition) {
		try {
			await().atMost(timeout).pollInterval(Duration.ofMillis(200)).until(condition);
		}
		catch (ConditionTimeoutException ex) {
			// Left to the assertions.
		}
	}

	private static Map<String, Long> retryDepths() {
		Map<String, Long> depths = new LinkedHashMap<>(broker.queueDepths("/"));
		depths.keySet()
			.removeIf((queue) -> !queue.startsWith("retry.delay.") && !queue.equals(SCHEDULED_QUEUE)
					&& !queue.equals(PARKING_LOT));
		return depths;
	}

	private static List<Sent> sendBurst(String run) throws Exception {
		List<Sent> burst = new ArrayList<>();
		List<CompletableFuture<Void>> confirms = new ArrayList<>();
		for (int i = 0; i < BURST; i++) {
			Message message = message(run + "-burst-" + i, 1000 + i);
			Duration delay = Duration.ofMillis(500).plus(BURST_SPREAD.multipliedBy(i).dividedBy(BURST));
			Instant due = Instant.now().plus(delay).truncatedTo(ChronoUnit.MILLIS);
			burst.add(new Sent(message.getMessageProperties().getMessageId(), due, delay, message.getBody(),
					new LinkedHashMap<>(message.getMessageProperties().getHeaders())));
			confirms.add(sender().sendAsync(TARGET_EXCHANGE, ROUTING_KEY, message, due));
			Thread.sleep(BURST_PACE.toMillis());
		}
		CompletableFuture.allOf(confirms.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
		return burst;
	}

	private static void assertAsSent(Sent message, List<Delivery> copies, Report report) {
		for (Delivery copy : copies) {
			// Arrival is when the target's consumer got it, after the starter published
			// it: the consumer is attached whenever the node runs.
			assertThat(copy.epochMillis())
				.as("%s: arrival (epoch ms), never before it is due%n%s", message.id(), report)
				.isGreaterThanOrEqualTo(message.due().toEpochMilli());
			assertThat(copy.body()).as("%s: body as sent", message.id()).isEqualTo(message.body());
			assertThat(copy.properties().getMessageId()).isEqualTo(message.id());
			assertThat(copy.properties().getCorrelationId()).isEqualTo("correlation-" + message.id());
			assertThat(copy.properties().getContentType()).isEqualTo("application/json");
			assertThat(copy.properties().getType()).isEqualTo("reminder");
			assertThat(copy.properties().getDeliveryMode()).isEqualTo(2);
			assertThat(copy.properties().getExpiration()).isNull();
			assertThat(headers(copy.properties())).as("%s: headers as sent, and no others", message.id())
				.isEqualTo(message.headers());
		}
	}

	/**
	 * Send a message with a delay.
	 * @param id its message id
	 * @param number its number (a header)
	 * @param delay the delay
	 * @param atATime whether to send it at a time rather than after a delay
	 * @return what was sent
	 * @throws Refused when the sender reports it failed
	 */
	private static Sent send(String id, int number, Duration delay, boolean atATime) {
		Message message = message(id, number);
		Map<String, Object> headers = new LinkedHashMap<>(message.getMessageProperties().getHeaders());
		// At a time, in whole milliseconds: the due time travels as epoch ms. After a
		// delay: at least that long from before the call.
		Instant due = atATime ? Instant.now().plus(delay).truncatedTo(ChronoUnit.MILLIS) : Instant.now().plus(delay);
		Sent sent = new Sent(id, due, delay, message.getBody(), headers);
		try {
			if (atATime) {
				sender().send(TARGET_EXCHANGE, ROUTING_KEY, message, due);
			}
			else {
				sender().send(TARGET_EXCHANGE, ROUTING_KEY, message, delay);
			}
		}
		catch (DelayedSendException ex) {
			throw new Refused(sent, ex);
		}
		return sent;
	}

	private static Message message(String id, int number) {
		MessageProperties properties = new MessageProperties();
		properties.setMessageId(id);
		properties.setCorrelationId("correlation-" + id);
		properties.setContentType("application/json");
		properties.setType("reminder");
		properties.setDeliveryMode(MessageDeliveryMode.PERSISTENT);
		properties.setHeader("tenant", "acme");
		properties.setHeader("number", number);
		return new Message(("{\"reminder\":\"" + id + "\"}").getBytes(StandardCharsets.UTF_8), properties);
	}

	private static Map<String, Object> headers(AMQP.BasicProperties properties) {
		Map<String, Object> headers = new LinkedHashMap<>();
		if (properties.getHeaders() != null) {
			// Strings come back as the client's LongString.
			properties.getHeaders()
				.forEach((name, value) -> headers.put(name, (value instanceof Number) ? value : String.valueOf(value)));
		}
		return headers;
	}

	private static Map<String, String> queueTypes() {
		String output = broker.ctl("list_queues", "-p", "/", "name", "type", "--no-table-headers", "--quiet")
			.requireSuccess()
			.output();
		return output.lines()
			.map((line) -> line.strip().split("\\s+"))
			.filter((columns) -> columns.length == 2)
			.collect(Collectors.toMap((columns) -> columns[0], (columns) -> columns[1]));
	}

	private static DelayedSender sender() {
		return bean(DelayedSender.class);
	}

	private static <T> T bean(Class<T> type) {
		return application.getBean(type);
	}

	/**
	 * A delayed send.
	 *
	 * @param id its message id
	 * @param due when it is due
	 * @param delay the delay it was sent with
	 * @param body its body
	 * @param headers its headers as sent
	 */
	record Sent(String id, Instant due, Duration delay, byte[] body, Map<String, Object> headers) {

		boolean isDueBetween(long from, long to) {
			return this.due.toEpochMilli() >= from && this.due.toEpochMilli() <= to;
		}

		boolean isDueAfter(long time) {
			return this.due.toEpochMilli() > time;
		}

	}

	/** A delayed send that the sender reported as failed. */
	static final class Refused extends RuntimeException {

		private final Sent message;

		Refused(Sent message, DelayedSendException cause) {
			super(rootCause(cause), cause);
			this.message = message;
		}

	}

	private static String rootCause(Throwable failure) {
		Throwable root = failure;
		while (root.getCause() != null && root.getCause() != root) {
			root = root.getCause();
		}
		return root.getClass().getSimpleName() + ": " + root.getMessage();
	}

	/**
	 * Delayed sends, one every {@link #INTERVAL}, while the node goes down and comes
	 * back: confirmed, or reported as failed.
	 */
	static final class OutageSends {

		static final Duration INTERVAL = Duration.ofMillis(250);

		static final Duration DELAY = Duration.ofMillis(1500);

		private final String run;

		private final List<Timed<Sent>> confirmed = new CopyOnWriteArrayList<>();

		private final Map<Sent, String> refused = new ConcurrentHashMap<>();

		private final Thread thread;

		private volatile boolean running = true;

		private OutageSends(String run) {
			this.run = run;
			this.thread = new Thread(this::send, "outage-sends");
			this.thread.setDaemon(true);
		}

		static OutageSends start(String run) {
			OutageSends sends = new OutageSends(run);
			sends.thread.start();
			return sends;
		}

		private void send() {
			for (int i = 0; this.running; i++) {
				try {
					Sent sent = DelayedSendRestartIntegrationTests.send(this.run + "-during-" + i, 100 + i, DELAY,
							true);
					this.confirmed.add(new Timed<>(System.currentTimeMillis(), sent));
				}
				catch (Refused ex) {
					this.refused.put(ex.message, ex.getMessage());
				}
				try {
					Thread.sleep(INTERVAL.toMillis());
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return;
				}
			}
		}

		/**
		 * Stop sending once a send was confirmed after a time.
		 * @param time the time, in epoch ms
		 * @param timeout how long to wait for it
		 * @return whether one was
		 */
		boolean stopOnceConfirmedAfter(long time, Duration timeout) throws InterruptedException {
			try {
				await().atMost(timeout)
					.pollInterval(Duration.ofMillis(100))
					.until(() -> this.confirmed.stream().anyMatch((sent) -> sent.epochMillis() > time));
				return true;
			}
			catch (ConditionTimeoutException ex) {
				return false;
			}
			finally {
				this.running = false;
				this.thread.join(30_000);
			}
		}

		List<Sent> confirmed() {
			return this.confirmed.stream().map(Timed::value).toList();
		}

		/**
		 * The sends reported as failed.
		 * @return each with the failure
		 */
		Map<Sent, String> refused() {
			return Map.copyOf(this.refused);
		}

	}

	/**
	 * Something that happened at a time.
	 *
	 * @param <T> what
	 * @param epochMillis when
	 * @param value what
	 */
	record Timed<T>(long epochMillis, T value) {

	}

	/**
	 * A message the target queue delivered.
	 *
	 * @param epochMillis when it arrived
	 * @param redelivered whether the broker delivered it before (to this consumer, whose
	 * acknowledgement the restart lost)
	 * @param properties its properties
	 * @param body its body
	 */
	record Delivery(long epochMillis, boolean redelivered, AMQP.BasicProperties properties, byte[] body) {

		String id() {
			return String.valueOf(this.properties.getMessageId());
		}

	}

	/** What a run sent and what arrived, for the build log. */
	record Report(String run, long down, long up, List<Sent> sent, Map<Sent, String> refused,
			List<Delivery> deliveries) {

		/**
		 * The copies of a message that reached the target: a delivery the broker gave
		 * this consumer again (its acknowledgement lost in the restart) is the same copy.
		 * @param message the message
		 * @return its copies, in order of arrival
		 */
		List<Delivery> copiesOf(Sent message) {
			List<Delivery> all = this.deliveries.stream()
				.filter((delivery) -> delivery.id().equals(message.id()))
				.toList();
			List<Delivery> copies = all.stream().filter((delivery) -> !delivery.redelivered()).toList();
			return (copies.isEmpty() && !all.isEmpty()) ? List.of(all.get(0)) : copies;
		}

		@Override
		public String toString() {
			long first = this.sent.stream()
				.mapToLong((message) -> message.due().toEpochMilli() - message.delay().toMillis())
				.min()
				.orElse(this.down);
			StringBuilder report = new StringBuilder("Delayed sends across a ").append(this.run)
				.append(" of RabbitMQ ")
				.append(version)
				.append(" (Java ")
				.append(Runtime.version().feature())
				.append(")")
				.append(": node down at +")
				.append(this.down - first)
				.append(" ms, back at +")
				.append(this.up - first)
				.append(" ms\n");
			long duplicates = 0;
			long lost = 0;
			long maxLateness = 0;
			long maxSinceUp = 0;
			for (Sent message : this.sent) {
				List<Delivery> copies = copiesOf(message);
				duplicates += Math.max(0, copies.size() - 1);
				lost += copies.isEmpty() ? 1 : 0;
				if (!copies.isEmpty()) {
					long arrived = copies.get(0).epochMillis();
					maxLateness = Math.max(maxLateness, arrived - message.due().toEpochMilli());
					maxSinceUp = Math.max(maxSinceUp, arrived - Math.max(message.due().toEpochMilli(), this.up));
				}
				if (message.id().contains("-burst-") && copies.size() == 1) {
					// The burst in a line of its own below, but for its duplicates and
					// losses.
					continue;
				}
				String when = message.isDueBetween(this.down, this.up) ? "due while down"
						: message.isDueAfter(this.up) ? "due after" : "due before the outage";
				report.append("  ")
					.append(message.id())
					.append(": delay ")
					.append(message.delay().toMillis())
					.append(" ms, due at +")
					.append(message.due().toEpochMilli() - first)
					.append(" ms (")
					.append(when)
					.append("), ");
				if (copies.isEmpty()) {
					report.append("LOST\n");
					continue;
				}
				long lateness = copies.get(0).epochMillis() - message.due().toEpochMilli();
				long sinceUp = copies.get(0).epochMillis() - Math.max(message.due().toEpochMilli(), this.up);
				report.append(copies.size())
					.append((copies.size() == 1) ? " copy" : " copies")
					.append(", first ")
					.append(lateness)
					.append(" ms after due (")
					.append(sinceUp)
					.append(" ms after max(due, back)), arrivals at +")
					.append(copies.stream().map((copy) -> copy.epochMillis() - first).toList())
					.append(" ms\n");
			}
			List<Sent> refusedInOrder = this.refused.keySet().stream().sorted(Comparator.comparing(Sent::due)).toList();
			long arrivedAnyway = 0;
			for (Sent message : refusedInOrder) {
				List<Delivery> copies = copiesOf(message);
				arrivedAnyway += copies.isEmpty() ? 0 : 1;
				report.append("  ")
					.append(message.id())
					.append(": due at +")
					.append(message.due().toEpochMilli() - first)
					.append(" ms, reported as failed (")
					.append(this.refused.get(message))
					.append("), ")
					.append(copies.isEmpty() ? "did not arrive" : "ARRIVED (" + copies.size() + ")")
					.append("\n");
			}
			return report.append("  ")
				.append(this.sent.size())
				.append(" sent (")
				.append(this.sent.stream().filter((message) -> message.id().contains("-burst-")).count())
				.append(" in the burst, ")
				.append(this.sent.stream().filter((message) -> message.isDueBetween(this.down, this.up)).count())
				.append(" due while down), ")
				.append(lost)
				.append(" lost, ")
				.append(duplicates)
				.append(" duplicates, latest first arrival ")
				.append(maxLateness)
				.append(" ms after due, ")
				.append(maxSinceUp)
				.append(" ms after max(due, back); ")
				.append(this.refused.size())
				.append(" sends reported as failed, ")
				.append(arrivedAnyway)
				.append(" of them arrived all the same")
				.toString();
		}

	}

	/**
	 * A plain AMQP consumer of the target queue that records every delivery with its time
	 * of arrival, and consumes again whenever the node comes back.
	 */
	static final class TargetConsumer implements AutoCloseable {

		private final HarnessBroker broker;

		private final String queue;

		private final List<Delivery> deliveries = new CopyOnWriteArrayList<>();

		private final Thread thread;

		private volatile boolean running = true;

		private TargetConsumer(HarnessBroker broker, String queue) {
			this.broker = broker;
			this.queue = queue;
			this.thread = new Thread(this::consume, "target-consumer");
			this.thread.setDaemon(true);
		}

		static TargetConsumer start(HarnessBroker broker, String queue) {
			TargetConsumer consumer = new TargetConsumer(broker, queue);
			consumer.thread.start();
			return consumer;
		}

		boolean has(String id) {
			return this.deliveries.stream().anyMatch((delivery) -> delivery.id().equals(id));
		}

		boolean quietFor(Duration quiet) {
			long last = this.deliveries.stream().mapToLong(Delivery::epochMillis).max().orElse(0);
			return System.currentTimeMillis() - last >= quiet.toMillis();
		}

		List<Delivery> deliveries() {
			return List.copyOf(this.deliveries);
		}

		private void consume() {
			while (this.running) {
				try (Connection connection = this.broker.connectionFactory("/").newConnection("target-consumer")) {
					Channel channel = connection.createChannel();
					channel.basicQos(50);
					channel.basicConsume(this.queue, false, new DefaultConsumer(channel) {

						@Override
						public void handleDelivery(String consumerTag, Envelope envelope,
								AMQP.BasicProperties properties, byte[] body) throws IOException {
							TargetConsumer.this.deliveries.add(
									new Delivery(System.currentTimeMillis(), envelope.isRedeliver(), properties, body));
							getChannel().basicAck(envelope.getDeliveryTag(), false);
						}

					});
					while (this.running && channel.isOpen()) {
						Thread.sleep(20);
					}
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return;
				}
				catch (Exception ex) {
					// The node is down or starting: consume again as soon as it is back.
				}
				pause();
			}
		}

		private void pause() {
			try {
				Thread.sleep(100);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				this.running = false;
			}
		}

		@Override
		public void close() throws InterruptedException {
			this.running = false;
			this.thread.join(10_000);
		}

	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

	}

}
