package io.github.tieredretry.benchmarks;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import io.github.tieredretry.benchmarks.broker.BrokerOperations;
import io.github.tieredretry.benchmarks.broker.BrokerSettings;
import io.github.tieredretry.benchmarks.broker.MessagePublisher;
import io.github.tieredretry.benchmarks.report.Comparison;
import io.github.tieredretry.benchmarks.report.DelayedSendResult;
import io.github.tieredretry.benchmarks.report.RatioSeries;
import io.github.tieredretry.benchmarks.report.Summary;
import io.github.tieredretry.delayedsend.DelayedSender;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.internal.topology.RetryTopology;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.core.RabbitTemplate;

/**
 * Benchmark 10 (issue #34): delayed sends with {@code DelayedSender}, in an application
 * of their own with quorum tiers of 1 s and 2 s (each 1 ms longer) and no listener.
 * <ul>
 * <li><b>Precision</b>: sends at a steady rate, each with a delay of one tier and with
 * one the tiers compose of two hops, to an exchange of this run, where a plain client
 * consumer of a queue bound to it records how late each arrived: arrival minus (the time
 * just before the send + the delay). Early arrivals are counted, never hidden: the sender
 * promises none.</li>
 * <li><b>Throughput</b>: sends per second of one thread, {@code DelayedSender.send} (one
 * at a time, each returning on the broker's confirm) beside a plain
 * {@code RabbitTemplate} publish waiting for its confirm, and the same pipelined:
 * {@code sendAsync} beside template publishes with correlated confirms, each side holding
 * at most {@value BenchmarkSettings#DELAYED_SEND_WINDOW} unconfirmed. Same 1 KB bodies,
 * persistent and mandatory, into the same quorum tier (the 47 min one, purged after every
 * round), so that the broker does the same work on both sides.</li>
 * </ul>
 */
final class DelayedSendBenchmark {

	static final String DELAYED_ONE_AT_A_TIME = "DelayedSender.send, one at a time";

	static final String PLAIN_ONE_AT_A_TIME = "RabbitTemplate publish, waiting for each confirm";

	static final String DELAYED_PIPELINED = "DelayedSender.sendAsync, window of "
			+ BenchmarkSettings.DELAYED_SEND_WINDOW;

	static final String PLAIN_PIPELINED = "RabbitTemplate publish, correlated confirms, window of "
			+ BenchmarkSettings.DELAYED_SEND_WINDOW;

	/** Header with a precision send's index in its round. */
	static final String INDEX_HEADER = "bench-index";

	/**
	 * Header with when a precision send is due: the time just before the send plus the
	 * delay, in microseconds since the epoch.
	 */
	static final String DUE_HEADER = "bench-due-micros";

	private static final String ROUTING_KEY = "delayed-send";

	private static final long CONFIRM_TIMEOUT_SECONDS = 60;

	private DelayedSendBenchmark() {
	}

	static DelayedSendResult run(RunContext run) {
		RunningApplication application = run.application(RunContext.DELAYED_SEND);
		DelayedSender sender = application.context().getBean(DelayedSender.class);
		RabbitTemplate template = application.context().getBean(RabbitTemplate.class);
		TierLadder ladder = application.context().getBean(RetryTopology.class).tiers();
		if (!template.getConnectionFactory().isPublisherConfirms()
				|| !template.isMandatoryFor(message(new byte[0], "check", 0))) {
			throw new IllegalStateException("The delayed-send application's RabbitTemplate must publish with "
					+ "correlated confirms, mandatory");
		}
		String target = run.runId() + "-delayed-send-target";
		run.broker().declareOwnExchange(target);
		run.broker().declareOwnQueue(target);
		run.broker().bind(target, target, ROUTING_KEY);
		byte[] body = new byte[MessagePublisher.BODY_SIZE];
		// The same incompressible bytes as every other benchmark's messages.
		new Random(42).nextBytes(body);
		List<DelayedSendResult.Lateness> precision;
		try (TargetConsumer consumer = new TargetConsumer(run.settings().broker(), target)) {
			precision = precision(run, sender, ladder, consumer, target, body);
		}
		long scheduled = run.broker().messageCount(run.scheduledQueue(RunContext.DELAYED_SEND));
		if (scheduled != 0) {
			run.log("[delayed-send] " + scheduled + " messages left in the scheduled queue after the precision rounds");
		}
		Comparison throughput = throughput(run, sender, template, target, body);
		List<String> tiers = ladder.tiers().stream().map(TierLadder::nameOf).toList();
		return new DelayedSendResult(tiers, ladder.tiers().get(0).toMillis(), precision, throughput,
				BenchmarkSettings.DELAYED_SEND_WINDOW);
	}

	/**
	 * The label of a precision side.
	 * @param delay the delay
	 * @param hops the tiers the ladder composes it of
	 * @return e.g. {@code 3s: 2 hops (2001ms + 1001ms)}
	 */
	static String label(Duration delay, List<Duration> hops) {
		return "delay " + TierLadder.nameOf(delay) + ": " + hops.size() + ((hops.size() == 1) ? " hop (" : " hops (")
				+ hops(hops) + ")";
	}

	private static String hops(List<Duration> hops) {
		return hops.stream().map(TierLadder::nameOf).collect(Collectors.joining(" + "));
	}

	// Each delay's sends at a steady rate (the accuracy benchmark's), the delays
	// alternating like every comparison's sides.
	private static List<DelayedSendResult.Lateness> precision(RunContext run, DelayedSender sender, TierLadder ladder,
			TargetConsumer consumer, String target, byte[] body) {
		BenchmarkSettings settings = run.settings();
		int messages = settings.delayedSendMessages();
		int rate = settings.accuracyRate();
		Map<String, Duration> delays = new LinkedHashMap<>();
		Map<String, Alternation.RoundMeasurement<Arrivals>> sides = new LinkedHashMap<>();
		for (Duration delay : settings.delayedSendDelays()) {
			String label = label(delay, ladder.hopsFor(delay));
			delays.put(label, delay);
			sides.put(label,
					(side, roundId) -> precisionRound(sender, consumer, target, body, roundId, delay, messages, rate));
		}
		run.log("[delayed-send] precision: " + messages + " sends per delay and repeat at " + rate + "/s, to "
				+ "exchange " + target + "; tiers " + ladder.tiers().stream().map(TierLadder::nameOf).toList());
		Alternation.Rounds<Arrivals> rounds = run.alternate("delayed-send-precision", sides, settings.repeats(),
				settings.warmups(), DelayedSendBenchmark::describe);
		List<DelayedSendResult.Lateness> results = new ArrayList<>();
		for (Map.Entry<String, Duration> side : delays.entrySet()) {
			List<Arrivals> measured = rounds.values().get(side.getKey());
			DelayedSendResult.Lateness lateness = new DelayedSendResult.Lateness(side.getKey(),
					TierLadder.nameOf(side.getValue()), hops(ladder.hopsFor(side.getValue())), messages,
					measured.stream().map(Arrivals::latenessMicros).toList(),
					measured.stream().mapToLong(Arrivals::duplicates).sum());
			results.add(lateness);
			run.log("[delayed-send] " + lateness.label() + ": " + lateness.count() + " sends, p50 "
					+ lateness.percentile(50) + " ms, p99 " + lateness.percentile(99) + " ms, max " + lateness.max()
					+ " ms, "
					+ ((lateness.earlyCount() > 0) ? "EARLY: " + lateness.earlyCount() + " ARRIVED BEFORE "
							+ "THEIR DELAY HAD PASSED (min " + lateness.min() + " ms)" : "none early")
					+ ", duplicates " + lateness.duplicates());
		}
		if (consumer.strays() > 0) {
			run.log("[delayed-send] " + consumer.strays() + " sends arrived after their round had ended");
		}
		return results;
	}

	private static Arrivals precisionRound(DelayedSender sender, TargetConsumer consumer, String target, byte[] body,
			String roundId, Duration delay, int messages, int rate) {
		TargetConsumer.Round round = consumer.expect(roundId, messages);
		long delayMicros = delay.toNanos() / 1000;
		long interval = 1_000_000_000L / rate;
		long start = System.nanoTime();
		for (int index = 0; index < messages; index++) {
			long wait = start + index * interval - System.nanoTime();
			if (wait > 0) {
				LockSupport.parkNanos(wait);
			}
			Message message = message(body, roundId, index);
			// Read just before the send, which reads the clock again: the sender's due
			// time is this or a little later, so an early arrival cannot hide here.
			long sent = epochMicros(Instant.now());
			message.getMessageProperties().setHeader(DUE_HEADER, sent + delayMicros);
			sender.send(target, ROUTING_KEY, message, delay);
		}
		return round.await(delay.plus(RunContext.roundTimeout(messages)));
	}

	private static String describe(Arrivals arrivals) {
		long[] sorted = arrivals.latenessMicros().clone();
		Arrays.sort(sorted);
		long early = Arrays.stream(sorted).filter((micros) -> micros < 0).count();
		return "p50 " + Math.floorDiv(Summary.percentile(sorted, 50), 1000) + " ms, p99 "
				+ Math.floorDiv(Summary.percentile(sorted, 99), 1000) + " ms, max "
				+ Math.floorDiv(sorted[sorted.length - 1], 1000) + " ms, " + sorted.length + " sends"
				+ ((early > 0) ? ", " + early + " EARLY" : "");
	}

	// One thread's sends per second, delayed and plain, one at a time and pipelined, into
	// the same quorum tier, which nothing leaves during the run.
	private static Comparison throughput(RunContext run, DelayedSender sender, RabbitTemplate template, String target,
			byte[] body) {
		int messages = run.settings().delayedSendThroughputMessages();
		int window = BenchmarkSettings.DELAYED_SEND_WINDOW;
		// Nominal: the delayed sends' one hop is the quorum forwarding tier, 1 ms longer.
		Duration delay = BenchmarkSettings.FORWARDING_TIER;
		String tier = TierLadder.nameOf(BenchmarkSettings.forwardingTier(BenchmarkSettings.DEFAULT_TIER_TYPE));
		String plainRoutingKey = run.runId() + "-plain-send";
		run.purgeForwardingTiers();
		Map<String, Alternation.Measurement> sides = new LinkedHashMap<>();
		sides.put(DELAYED_ONE_AT_A_TIME, (label, roundId) -> timed(run, messages, () -> {
			for (int index = 0; index < messages; index++) {
				sender.send(target, ROUTING_KEY, message(body, roundId, index), delay);
			}
		}));
		sides.put(PLAIN_ONE_AT_A_TIME, (label, roundId) -> timed(run, messages, () -> {
			for (int index = 0; index < messages; index++) {
				CorrelationData correlation = new CorrelationData(roundId + "-" + index);
				template.send(RetryTopology.DELAY_EXCHANGE, plainRoutingKey, plainMessage(body, roundId, index, tier),
						correlation);
				String failure = failure(awaitConfirm(correlation), correlation);
				if (failure != null) {
					throw new IllegalStateException("A plain publish into tier " + tier + " failed: " + failure);
				}
			}
		}));
		sides.put(DELAYED_PIPELINED, (label, roundId) -> timed(run, messages, () -> {
			Window inFlight = new Window(window);
			for (int index = 0; index < messages; index++) {
				inFlight.acquire();
				sender.sendAsync(target, ROUTING_KEY, message(body, roundId, index), Instant.now().plus(delay))
					.whenComplete((done, ex) -> inFlight.release((ex != null) ? ex.toString() : null));
			}
			inFlight.awaitAll("delayed sends");
		}));
		sides.put(PLAIN_PIPELINED, (label, roundId) -> timed(run, messages, () -> {
			Window inFlight = new Window(window);
			for (int index = 0; index < messages; index++) {
				inFlight.acquire();
				CorrelationData correlation = new CorrelationData(roundId + "-" + index);
				template.send(RetryTopology.DELAY_EXCHANGE, plainRoutingKey, plainMessage(body, roundId, index, tier),
						correlation);
				correlation.getFuture()
					.whenComplete((confirm, ex) -> inFlight
						.release((ex != null) ? ex.toString() : failure(confirm, correlation)));
			}
			inFlight.awaitAll("plain publishes");
		}));
		run.log("[delayed-send] throughput: " + messages + " sends per side and repeat, one thread, into tier " + tier
				+ "; pipelined sides hold " + window + " unconfirmed at most");
		Alternation.Outcome outcome = run.alternate("delayed-send", sides);
		return new Comparison("delayed-send", "10. Delayed sends: sends per second beside a plain confirmed publish",
				"messages/s", messages, outcome.allSeries(),
				List.of(RatioSeries.of("DelayedSender.send ÷ RabbitTemplate publish, one at a time, each confirmed",
						outcome.series(DELAYED_ONE_AT_A_TIME), outcome.series(PLAIN_ONE_AT_A_TIME), Double.NaN),
						RatioSeries.of(
								"DelayedSender.sendAsync ÷ RabbitTemplate publish with correlated confirms, window of "
										+ window,
								outcome.series(DELAYED_PIPELINED), outcome.series(PLAIN_PIPELINED), Double.NaN)),
				outcome.orders());
	}

	// Messages per second of a round: from before the first send to the last confirm;
	// the tier is purged after it, whatever happened.
	private static double timed(RunContext run, int messages, Runnable sends) {
		try {
			long start = System.nanoTime();
			sends.run();
			return HappyPathBenchmark.perSecond(messages, System.nanoTime() - start);
		}
		finally {
			run.purgeForwardingTiers();
		}
	}

	private static CorrelationData.Confirm awaitConfirm(CorrelationData correlation) {
		try {
			return correlation.getFuture().get(CONFIRM_TIMEOUT_SECONDS, TimeUnit.SECONDS);
		}
		catch (ExecutionException | TimeoutException ex) {
			throw new IllegalStateException("No confirm for plain publish " + correlation.getId(), ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

	// Why a plain publish failed, or null: nacked, or returned (mandatory, unroutable).
	private static @Nullable String failure(CorrelationData.Confirm confirm, CorrelationData correlation) {
		if (!confirm.ack()) {
			return "nacked: " + confirm.reason();
		}
		if (correlation.getReturned() != null) {
			return "returned: " + correlation.getReturned().getReplyText();
		}
		return null;
	}

	// A benchmark message: 1 KB, persistent, its round and index in headers.
	private static Message message(byte[] body, String roundId, int index) {
		MessageProperties properties = new MessageProperties();
		properties.setContentType(MessageProperties.CONTENT_TYPE_BYTES);
		properties.setDeliveryMode(MessageDeliveryMode.PERSISTENT);
		properties.setMessageId(roundId + "-" + index);
		properties.setHeader(MessagePublisher.ROUND_HEADER, roundId);
		properties.setHeader(INDEX_HEADER, index);
		return new Message(body, properties);
	}

	// The same message with the header that routes it into a tier through retry.delay.
	private static Message plainMessage(byte[] body, String roundId, int index, String tier) {
		Message message = message(body, roundId, index);
		message.getMessageProperties().setHeader(RetryHeaders.TIER, tier);
		return message;
	}

	private static long epochMicros(Instant instant) {
		return instant.getEpochSecond() * 1_000_000 + instant.getNano() / 1000;
	}

	/**
	 * What a precision round measured.
	 *
	 * @param latenessMicros how late each send arrived, in microseconds, by index
	 * @param duplicates sends that arrived more than once
	 */
	record Arrivals(long[] latenessMicros, long duplicates) {

	}

	/**
	 * At most so many sends unconfirmed; the first failure is kept and thrown.
	 */
	private static final class Window {

		private final int size;

		private final Semaphore permits;

		private final AtomicReference<String> failure = new AtomicReference<>();

		Window(int size) {
			this.size = size;
			this.permits = new Semaphore(size);
		}

		void acquire() {
			try {
				if (!this.permits.tryAcquire(CONFIRM_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
					throw new IllegalStateException("No confirm within " + CONFIRM_TIMEOUT_SECONDS + " s");
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted", ex);
			}
			throwIfFailed();
		}

		void release(@Nullable String failure) {
			if (failure != null) {
				this.failure.compareAndSet(null, failure);
			}
			this.permits.release();
		}

		void awaitAll(String what) {
			try {
				if (!this.permits.tryAcquire(this.size, CONFIRM_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
					throw new IllegalStateException(
							"The last " + what + " were not confirmed within " + CONFIRM_TIMEOUT_SECONDS + " s");
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted", ex);
			}
			throwIfFailed();
		}

		private void throwIfFailed() {
			String failed = this.failure.get();
			if (failed != null) {
				throw new IllegalStateException("A send of the pipelined side failed: " + failed);
			}
		}

	}

	/**
	 * A plain client consumer of the target queue (automatic acks), on a connection of
	 * its own: records when each send of the current round arrived.
	 */
	private static final class TargetConsumer implements AutoCloseable {

		private final Connection connection;

		private final AtomicLong strays = new AtomicLong();

		private volatile @Nullable Round current;

		TargetConsumer(BrokerSettings settings, String queue) {
			this.connection = BrokerOperations.connect(settings, "tiered-retry-benchmarks-delayed-send-target");
			try {
				Channel channel = this.connection.createChannel();
				channel.basicConsume(queue, true, new DefaultConsumer(channel) {

					@Override
					public void handleDelivery(String consumerTag, Envelope envelope, AMQP.BasicProperties properties,
							byte[] body) {
						arrived(properties, epochMicros(Instant.now()));
					}

				});
			}
			catch (IOException ex) {
				close();
				throw new IllegalStateException("Cannot consume the delayed sends' target queue " + queue, ex);
			}
		}

		Round expect(String roundId, int messages) {
			Round round = new Round(roundId, messages);
			this.current = round;
			return round;
		}

		long strays() {
			return this.strays.get();
		}

		private void arrived(AMQP.BasicProperties properties, long arrivedMicros) {
			Map<String, Object> headers = properties.getHeaders();
			Round round = this.current;
			if (round == null || headers == null
					|| !round.roundId.equals(String.valueOf(headers.get(MessagePublisher.ROUND_HEADER)))
					|| !(headers.get(INDEX_HEADER) instanceof Number index)
					|| !(headers.get(DUE_HEADER) instanceof Number due)) {
				this.strays.incrementAndGet();
				return;
			}
			round.arrived(index.intValue(), arrivedMicros - due.longValue());
		}

		@Override
		public void close() {
			try {
				this.connection.close();
			}
			catch (IOException | RuntimeException ex) {
				// Closing anyway.
			}
		}

		/** The sends of one round; filled on the client's one dispatch thread. */
		private static final class Round {

			private final String roundId;

			private final long[] latenessMicros;

			private final boolean[] arrived;

			private final CountDownLatch remaining;

			private final AtomicLong duplicates = new AtomicLong();

			Round(String roundId, int messages) {
				this.roundId = roundId;
				this.latenessMicros = new long[messages];
				this.arrived = new boolean[messages];
				this.remaining = new CountDownLatch(messages);
			}

			void arrived(int index, long latenessMicros) {
				if (this.arrived[index]) {
					this.duplicates.incrementAndGet();
					return;
				}
				this.arrived[index] = true;
				this.latenessMicros[index] = latenessMicros;
				this.remaining.countDown();
			}

			Arrivals await(Duration timeout) {
				try {
					if (!this.remaining.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
						throw new IllegalStateException("Round " + this.roundId + ": only "
								+ (this.latenessMicros.length - this.remaining.getCount()) + " of "
								+ this.latenessMicros.length + " delayed sends reached their target within "
								+ TierLadder.nameOf(timeout));
					}
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException("Interrupted", ex);
				}
				return new Arrivals(this.latenessMicros.clone(), this.duplicates.get());
			}

		}

	}

}
