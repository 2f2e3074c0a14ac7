package io.github.tieredretry.benchmarks;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import io.github.tieredretry.benchmarks.app.BenchmarkListeners;
import io.github.tieredretry.benchmarks.broker.BrokerSettings;
import io.github.tieredretry.benchmarks.broker.MessagePublisher;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.topology.QueueType;

import org.springframework.boot.convert.DurationStyle;

/**
 * How big a run is. The full run's defaults are also in the module's pom (the documented
 * command passes them on); {@link #smoke} is the few-seconds variant that
 * {@code ./mvnw verify} runs.
 *
 * @param broker the broker
 * @param output the directory of {@code benchmarks.md}; charts and samples go to its
 * {@code benchmarks/}
 * @param benchmarks which benchmarks to run
 * @param repeats measured repeats per comparison
 * @param warmups discarded repeats before them
 * @param concurrency consumers per listener container, the same on every side
 * @param prefetch prefetch per consumer, the same on every side
 * @param happyMessages messages per side and repeat of the happy path
 * @param stormMessages messages per side and repeat of the failure storm
 * @param stormDelays the failure storm's nominal delays before retry 1 and 2, on every
 * side
 * @param blockingWindow how long the blocking-retry side of the storm is measured at most
 * @param forwardingMessages failures per side and repeat of the forwarding benchmark
 * @param accuracyMessages messages through one tier for the delay accuracy
 * @param accuracyRate messages per second they are published (and fail) at
 * @param topologyListeners retryable listeners of the topology benchmark
 * @param listenerWork how long every listener invocation waits, standing in for real work
 * (zero: none)
 * @param outage how long the outage benchmark's downstream is down
 * @param outageLeadIn how long its stream runs with the downstream up before the outage
 * @param outageRate messages per second of its stream
 * @param outageDelays its policy's nominal delays before retry 1, 2, …
 * @param outageBreakerWait how long its breaker stays open before it tries messages again
 * @param outageRepeats its measured repeats, no more than {@code repeats} (no warm-up:
 * its rounds last minutes)
 * @param jitterMessages messages per side and repeat of the jitter benchmark, failing
 * together while the downstream is down
 * @param jitterDelay its policy's nominal delay before the retry
 * @param jitterFactor the jitter of its side with jitter
 * @param brokerAccuracyMessages messages per side and repeat of the broker-backend
 * benchmark's delay accuracy (its storm and forwarding sides have the sizes of benchmarks
 * 2 and 3)
 * @param delayedSendMessages messages per side and repeat of the delayed-send benchmark's
 * precision
 * @param delayedSendThroughputMessages messages per side and repeat of its throughput
 * @param delayedSendTier the smallest of its tiers (nominal); the next is twice as long,
 * and its delays are one and three times as long
 */
public record BenchmarkSettings(BrokerSettings broker, Path output, Set<Benchmark> benchmarks, int repeats, int warmups,
		int concurrency, int prefetch, int happyMessages, int stormMessages, List<Duration> stormDelays,
		Duration blockingWindow, int forwardingMessages, int accuracyMessages, int accuracyRate, int topologyListeners,
		Duration listenerWork, Duration outage, Duration outageLeadIn, int outageRate, List<Duration> outageDelays,
		Duration outageBreakerWait, int outageRepeats, int jitterMessages, Duration jitterDelay, double jitterFactor,
		int brokerAccuracyMessages, int delayedSendMessages, int delayedSendThroughputMessages,
		Duration delayedSendTier) {

	/** The failure storm's failing share: every 20th message (5%). */
	public static final int STORM_FAILING_EVERY = 20;

	/** How many attempts of a failing storm message fail before it succeeds. */
	public static final int STORM_FAILING_ATTEMPTS = 2;

	/**
	 * The failure storm's default delays before retry 1 and 2, on every side (nominal:
	 * each tier type adds its {@linkplain #tier offset}).
	 */
	public static final List<Duration> STORM_DELAYS = List.of(Duration.ofSeconds(1), Duration.ofSeconds(2));

	/**
	 * The tier failures are forwarded to in the forwarding benchmark (nominal): long
	 * enough that nothing comes back during a run (the harness purges it).
	 */
	public static final Duration FORWARDING_TIER = Duration.ofMinutes(47);

	/** The tier of the delay accuracy benchmark (nominal). */
	public static final Duration ACCURACY_TIER = Duration.ofSeconds(1);

	/**
	 * The jitter of the broker-backend benchmark's delay-accuracy listener on the
	 * RabbitMQ AMQP 1.0 client: its one retry is drawn from 0.8 to 1.2 times
	 * {@link #ACCURACY_TIER}, a delay no queue argument makes (a queue's delayed retry
	 * makes fixed ones), and due times that interleave instead of falling due in the
	 * order the messages failed.
	 */
	public static final double AMQP_ACCURACY_JITTER = 0.2;

	/** The topology benchmark's tiers (nominal): the starter's defaults. */
	public static final List<Duration> TOPOLOGY_TIERS = List.of(Duration.ofSeconds(1), Duration.ofSeconds(5),
			Duration.ofSeconds(30), Duration.ofMinutes(2), Duration.ofMinutes(10), Duration.ofHours(1));

	/**
	 * The outage benchmark's default delays before retry 1, 2 and 3 (nominal): 16 s in
	 * all, so that a message failing at the start of a 60 s outage has run through its
	 * retries and is parked well before it ends.
	 */
	public static final List<Duration> OUTAGE_DELAYS = List.of(Duration.ofSeconds(1), Duration.ofSeconds(5),
			Duration.ofSeconds(10));

	/**
	 * How long the outage benchmark's stream runs before the outage: the listener in its
	 * steady state.
	 */
	public static final Duration OUTAGE_LEAD_IN = Duration.ofSeconds(5);

	/**
	 * The outage benchmark's breaker: the failure rate in percent of the latest outcomes
	 * at which it opens (the example of docs/circuit-breaker.md).
	 */
	public static final float OUTAGE_BREAKER_THRESHOLD = 80;

	/**
	 * How many of the latest outcomes the outage benchmark's breaker counts, and needs
	 * before it may open.
	 */
	public static final int OUTAGE_BREAKER_WINDOW = 20;

	/**
	 * How many messages the outage benchmark's breaker tries before it resumes or pauses
	 * again.
	 */
	public static final int OUTAGE_BREAKER_PROBES = 3;

	/**
	 * The jitter benchmark's tiers below its delay (nominal), which is a tier too: fine
	 * enough that the tiers serve a spread of 20% of a few seconds in many steps, with a
	 * few hops per draw.
	 */
	public static final List<Duration> JITTER_TIERS = List.of(Duration.ofMillis(200), Duration.ofSeconds(1),
			Duration.ofSeconds(2));

	/**
	 * The window of the jitter benchmark's peak arrival rate: the most retries that reach
	 * the listener within any 100 ms.
	 */
	public static final Duration JITTER_PEAK_WINDOW = Duration.ofMillis(100);

	/**
	 * How many delayed sends (and plain publishes) the pipelined sides of the
	 * delayed-send benchmark hold unconfirmed at most.
	 */
	public static final int DELAYED_SEND_WINDOW = 100;

	/**
	 * The tier type of every headline figure: quorum, the safe default; classic is
	 * measured beside it.
	 */
	public static final QueueType DEFAULT_TIER_TYPE = QueueType.QUORUM;

	/**
	 * The tier a benchmark uses for a nominal duration and a queue type: 1 ms longer for
	 * quorum tiers, 2 ms for classic ones ({@code retry.delay.1001ms},
	 * {@code retry.delay.1002ms}). Tier queues are shared by name on a virtual host and a
	 * queue's type can never change, so each type needs names of its own; durations that
	 * applications do not use also keep the harness off their tiers on a shared broker,
	 * where a {@code retry.delay.1s} of the other type may exist.
	 * @param nominal the nominal duration
	 * @param type the tier queue type
	 * @return the tier's duration
	 */
	public static Duration tier(Duration nominal, QueueType type) {
		return nominal.plusMillis((type == QueueType.QUORUM) ? 1 : 2);
	}

	/**
	 * The tiers for nominal durations and a queue type.
	 * @param nominal the nominal durations
	 * @param type the tier queue type
	 * @return the tiers' durations, in the same order
	 * @see #tier(Duration, QueueType)
	 */
	public static List<Duration> tiers(List<Duration> nominal, QueueType type) {
		return nominal.stream().map((duration) -> tier(duration, type)).toList();
	}

	/**
	 * How the report names a tier type.
	 * @param type the type
	 * @return e.g. {@code quorum}
	 */
	public static String typeName(QueueType type) {
		return type.name().toLowerCase(Locale.ROOT);
	}

	/** The benchmarks of the harness. */
	public enum Benchmark {

		/** 1. Throughput without failures. */
		HAPPY_PATH,

		/** 2. Throughput of the healthy messages while some fail. */
		FAILURE_STORM,

		/** 3. Confirmed forwards to a tier per second. */
		FORWARDING,

		/** How late retries come back from a tier. */
		DELAY_ACCURACY,

		/** Broker objects declared for many listeners. */
		TOPOLOGY,

		/**
		 * Messages parked and time to drain after a downstream outage, with and without
		 * the breaker.
		 */
		OUTAGE,

		/**
		 * Peak arrival rate of retries at the listener after an outage, with and without
		 * jitter.
		 */
		JITTER,

		/**
		 * The tiers against the broker backend (RabbitMQ 4.3's delayed retry): storm
		 * throughput, retries per second, delay accuracy, broker objects; run on RabbitMQ
		 * 4.3 or later only.
		 */
		BROKER_BACKEND,

		/**
		 * A batch listener: throughput without failures against a plain batch listener,
		 * and in a storm.
		 */
		BATCH_LISTENER,

		/**
		 * Delayed sends ({@code DelayedSender}): how late they arrive after a delay of
		 * one tier and of two hops, and their send rate beside a plain confirmed publish,
		 * one at a time and pipelined.
		 */
		DELAYED_SEND,

		/**
		 * {@code @RetryableListener} on the RabbitMQ AMQP 1.0 client against a plain
		 * listener of the same client, without failures and while every message fails
		 * once; run on RabbitMQ 4.0 or later only.
		 */
		AMQP_LISTENER;

		String key() {
			return name().toLowerCase(Locale.ROOT).replace('_', '-');
		}

		static Set<Benchmark> parse(String names) {
			if (names.isBlank() || "all".equalsIgnoreCase(names.trim())) {
				return EnumSet.allOf(Benchmark.class);
			}
			Set<Benchmark> selected = EnumSet.noneOf(Benchmark.class);
			for (String name : names.split(",")) {
				String key = name.trim();
				selected.add(Arrays.stream(values())
					.filter((benchmark) -> benchmark.key().equals(key))
					.findFirst()
					.orElseThrow(() -> new IllegalArgumentException(
							"Unknown benchmark '" + key + "' in benchmarks.only; use 'all' or some of "
									+ Arrays.stream(values()).map(Benchmark::key).toList())));
			}
			return selected;
		}

	}

	/**
	 * The full run, from {@code benchmarks.*} system properties; the defaults are the
	 * documented ones.
	 * @return the settings
	 */
	public static BenchmarkSettings fromSystemProperties() {
		return new BenchmarkSettings(BrokerSettings.fromEnvironment(), Path.of(property("output", "docs")),
				Benchmark.parse(property("only", "all")), intProperty("repeats", 5), intProperty("warmups", 1),
				intProperty("concurrency", 1), intProperty("prefetch", 250), intProperty("happy.messages", 20_000),
				intProperty("storm.messages", 20_000), durationsProperty("storm.delays", STORM_DELAYS),
				DurationStyle.detectAndParse(property("storm.blocking-window", "15s")),
				intProperty("forwarding.messages", 20_000), intProperty("accuracy.messages", 10_000),
				intProperty("accuracy.rate", 200), intProperty("topology.listeners", 50),
				DurationStyle.detectAndParse(property("listener-work", "0ms")),
				DurationStyle.detectAndParse(property("outage.duration", "60s")), OUTAGE_LEAD_IN,
				intProperty("outage.rate", 100), durationsProperty("outage.delays", OUTAGE_DELAYS),
				DurationStyle.detectAndParse(property("outage.breaker-wait", "8s")),
				Math.min(intProperty("outage.repeats", 2), intProperty("repeats", 5)),
				intProperty("jitter.messages", 2_000), DurationStyle.detectAndParse(property("jitter.delay", "5s")),
				doubleProperty("jitter.factor", 0.2), intProperty("broker.accuracy.messages", 2_000),
				intProperty("delayed-send.messages", 1_000), intProperty("delayed-send.throughput.messages", 2_000),
				DurationStyle.detectAndParse(property("delayed-send.tier", "1s")));
	}

	/**
	 * Every benchmark with tiny sizes, one repeat and no warm-up: proves the harness
	 * works, measures nothing.
	 * @param broker the broker
	 * @param output where to write the report
	 * @return the settings
	 */
	public static BenchmarkSettings smoke(BrokerSettings broker, Path output) {
		// Short storm delays: a storm round lasts until every retry is back. A 2 s outage
		// outlasts the outage policy's retries (0.6 s), so that the side without a
		// breaker parks messages. Jitter: 100 messages, 1s ± 50%. The broker backend (on
		// RabbitMQ 4.3 only): the storm's and forwarding's sizes, 40 for the accuracy.
		// Delayed sends: 40 per delay, 100 per throughput side, tiers of 100 ms and 200
		// ms.
		return new BenchmarkSettings(broker, output, EnumSet.allOf(Benchmark.class), 1, 0, 1, 250, 200, 200,
				List.of(Duration.ofMillis(100), Duration.ofMillis(200)), Duration.ofMillis(1500), 50, 40, 100, 5,
				Duration.ZERO, Duration.ofSeconds(2), Duration.ofMillis(500), 100,
				List.of(Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMillis(300)), Duration.ofMillis(500),
				1, 100, Duration.ofSeconds(1), 0.5, 40, 40, 100, Duration.ofMillis(100));
	}

	public BenchmarkSettings {
		if (repeats < 1 || warmups < 0 || concurrency < 1 || prefetch < 1 || accuracyRate < 1 || outageRate < 1
				|| outageRepeats < 1) {
			throw new IllegalArgumentException("repeats, concurrency, prefetch, accuracy.rate, outage.rate and "
					+ "outage.repeats must be positive, warmups not negative");
		}
		if (outage.isNegative() || outage.isZero() || outageLeadIn.isNegative() || outageBreakerWait.isNegative()
				|| outageBreakerWait.isZero()) {
			throw new IllegalArgumentException(
					"benchmarks.outage.duration and benchmarks.outage.breaker-wait must be " + "positive");
		}
		outageDelays = List.copyOf(outageDelays);
		if (outageDelays.isEmpty() || outageDelays.stream().anyMatch((delay) -> delay.isNegative() || delay.isZero())) {
			throw new IllegalArgumentException(
					"benchmarks.outage.delays must be positive durations, one per retry, not " + outageDelays);
		}
		if (brokerAccuracyMessages < 1) {
			throw new IllegalArgumentException("benchmarks.broker.accuracy.messages must be positive");
		}
		if (delayedSendMessages < 1 || delayedSendThroughputMessages < 1 || delayedSendTier.isNegative()
				|| delayedSendTier.isZero() || delayedSendTier.multipliedBy(3).compareTo(FORWARDING_TIER) >= 0) {
			throw new IllegalArgumentException("benchmarks.delayed-send.messages, "
					+ "benchmarks.delayed-send.throughput.messages and benchmarks.delayed-send.tier must be positive, "
					+ "three times the tier shorter than " + TierLadder.nameOf(FORWARDING_TIER));
		}
		if (jitterMessages < 1 || jitterDelay.isNegative() || jitterDelay.isZero()
				|| !(jitterFactor > 0 && jitterFactor <= 1)) {
			throw new IllegalArgumentException("benchmarks.jitter.messages and benchmarks.jitter.delay must be "
					+ "positive, benchmarks.jitter.factor above 0 and at most 1");
		}
		stormDelays = List.copyOf(stormDelays);
		if (stormDelays.size() != STORM_FAILING_ATTEMPTS
				|| stormDelays.stream().anyMatch((delay) -> delay.isNegative() || delay.isZero())) {
			throw new IllegalArgumentException("benchmarks.storm.delays must be " + STORM_FAILING_ATTEMPTS
					+ " positive durations, one per failing attempt, not " + stormDelays);
		}
	}

	/**
	 * The tier failures are forwarded to in the forwarding benchmark, for a tier type.
	 * @param type the tier queue type
	 * @return the tier
	 */
	public static Duration forwardingTier(QueueType type) {
		return tier(FORWARDING_TIER, type);
	}

	/**
	 * The delays of a retryable listener's policy, each exactly a tier of the given type,
	 * one retry per delay (outside the outage benchmark no message fails more often, so
	 * nothing is parked). The limit sides use the same.
	 * @param listener the listener
	 * @param type the tier queue type
	 * @return the delays before retry 1, 2, …
	 */
	public List<Duration> policyDelays(String listener, QueueType type) {
		return switch (listener) {
			case BenchmarkListeners.HAPPY, BenchmarkListeners.STORM -> tiers(this.stormDelays, type);
			case BenchmarkListeners.FORWARDING -> List.of(forwardingTier(type));
			case BenchmarkListeners.ACCURACY -> List.of(tier(ACCURACY_TIER, type));
			case BenchmarkListeners.OUTAGE -> tiers(this.outageDelays, type);
			case BenchmarkListeners.JITTER -> List.of(tier(this.jitterDelay, type));
			default -> throw new IllegalArgumentException("No policy for listener " + listener);
		};
	}

	/**
	 * The delays of a broker-backend listener's policy: the nominal delays, which the
	 * queue's delayed retry makes exactly when they grow linearly ({@code d, 2d, ...}),
	 * as the storm's defaults do; the same listener on the tiers has {@link #policyDelays
	 * the quorum tiers'}, 1 ms longer. The listener on the AMQP 1.0 client has the
	 * accuracy delay too, drawn with {@link #AMQP_ACCURACY_JITTER}.
	 * @param listener the listener on the broker backend
	 * @return the delays before retry 1, 2, …
	 */
	public List<Duration> brokerPolicyDelays(String listener) {
		return switch (listener) {
			case BenchmarkListeners.BACKEND_STORM_BROKER -> this.stormDelays;
			case BenchmarkListeners.BACKEND_FORWARDING_BROKER -> List.of(FORWARDING_TIER);
			case BenchmarkListeners.BACKEND_ACCURACY_BROKER, BenchmarkListeners.BACKEND_ACCURACY_AMQP ->
				List.of(ACCURACY_TIER);
			default -> throw new IllegalArgumentException("No broker-backend policy for listener " + listener);
		};
	}

	/**
	 * What the report shows of these settings.
	 * @return name to value
	 */
	public Map<String, String> describe() {
		Map<String, String> description = new LinkedHashMap<>();
		description.put("Listener containers",
				"simple, concurrency " + this.concurrency + ", prefetch " + this.prefetch
						+ ", acknowledge mode AUTO; identical on every side (the limit side: as many plain "
						+ "client consumers, same prefetch, manual acks)");
		description.put("Tier queues", typeName(DEFAULT_TIER_TYPE) + " (the default) wherever a side does not say "
				+ "otherwise, set explicitly on every side; each type has tiers of its own, 1 ms (quorum) or 2 ms "
				+ "(classic) longer than the nominal delays, e.g. `"
				+ RetryTopology.tierQueueName(tier(ACCURACY_TIER, QueueType.QUORUM)) + "` / `"
				+ RetryTopology.tierQueueName(tier(ACCURACY_TIER, QueueType.CLASSIC)) + "`");
		description.put("Messages", MessagePublisher.BODY_SIZE + " B body, persistent, published with confirms");
		description.put("Listener work",
				this.listenerWork.isZero() ? "none: the listener only counts (worst case for overheads)"
						: TierLadder.nameOf(this.listenerWork) + " wait per invocation, standing in for real work");
		description.put("Repeats", this.repeats + " measured per comparison, after " + this.warmups
				+ " discarded warm-up; side order rotated every repeat");
		description.put("Sizes", "happy path " + this.happyMessages + ", failure storm " + this.stormMessages
				+ " (delays " + this.stormDelays.stream().map(TierLadder::nameOf).collect(Collectors.joining(", "))
				+ "; blocking side measured " + TierLadder.nameOf(this.blockingWindow) + " at most), forwarding "
				+ this.forwardingMessages + " messages per side and repeat; delay accuracy " + this.accuracyMessages
				+ " at " + this.accuracyRate + " msg/s; topology " + this.topologyListeners + " listeners");
		description.put("Outage",
				TierLadder.nameOf(this.outage) + " outage of the downstream in a stream of " + this.outageRate
						+ " msg/s (" + TierLadder.nameOf(this.outageLeadIn) + " before it); policy "
						+ this.outageDelays.size() + " retries after "
						+ this.outageDelays.stream().map(TierLadder::nameOf).collect(Collectors.joining(", "))
						+ "; breaker: opens at " + Math.round(OUTAGE_BREAKER_THRESHOLD) + "% failures of the latest "
						+ OUTAGE_BREAKER_WINDOW + " messages, tries " + OUTAGE_BREAKER_PROBES + " again after "
						+ TierLadder.nameOf(this.outageBreakerWait) + "; " + this.outageRepeats
						+ ((this.outageRepeats == 1) ? " repeat" : " repeats")
						+ ", no warm-up; side order rotated every repeat");
		description.put("Jitter", this.jitterMessages + " messages fail together while the downstream is down, "
				+ "which comes back before their retry; policy 1 retry after " + TierLadder.nameOf(this.jitterDelay)
				+ ", with jitter " + this.jitterFactor + " and without; tiers "
				+ jitterTiers().stream().map(TierLadder::nameOf).collect(Collectors.joining(", "))
				+ "; peak: the most retries within any " + TierLadder.nameOf(JITTER_PEAK_WINDOW) + ", per second; "
				+ this.repeats + " repeats after " + this.warmups + " warm-up, side order rotated");
		description.put("Broker backend",
				"RabbitMQ 4.3 or later only: the same listeners on quorum work queues, "
						+ "retries in quorum tiers against retries held by the queue's delayed retry; storm "
						+ this.stormMessages + " and forwarding " + this.forwardingMessages
						+ " messages per side and repeat as above, delay " + "accuracy " + this.brokerAccuracyMessages
						+ " at " + this.accuracyRate + " msg/s per side and repeat (with a third side: the "
						+ "RabbitMQ AMQP 1.0 client, its queue holding each retry until its delivery time, "
						+ TierLadder.nameOf(ACCURACY_TIER) + " with jitter " + AMQP_ACCURACY_JITTER + "), topology "
						+ this.topologyListeners + " listeners");
		description.put("Delayed sends", "`DelayedSender` of an application with tiers "
				+ delayedSendTiers().stream().map(TierLadder::nameOf).collect(Collectors.joining(", "))
				+ " (quorum): precision " + this.delayedSendMessages + " sends per delay and repeat at "
				+ this.accuracyRate + " msg/s, delays "
				+ delayedSendDelays().stream().map(TierLadder::nameOf).collect(Collectors.joining(" and "))
				+ "; throughput " + this.delayedSendThroughputMessages
				+ " sends per side and repeat, one thread, one at a time and with a window of " + DELAYED_SEND_WINDOW
				+ ", beside a plain confirmed `RabbitTemplate` publish into the same " + "quorum tier; " + this.repeats
				+ " repeats after " + this.warmups + " warm-up, side order rotated");
		description.put("AMQP 1.0 listener", "RabbitMQ 4.0 or later only: listeners of the RabbitMQ AMQP 1.0 client "
				+ "(Spring AMQP's `RabbitAmqpListenerContainer`, initial credits " + this.prefetch
				+ "), plain and with `@RetryableListener` (quorum tiers), on classic work queues; happy path "
				+ this.happyMessages + " and storm " + this.stormMessages + " messages per side and repeat, every "
				+ "storm message failing once (delays as the failure storm's)");
		return description;
	}

	/**
	 * The jitter benchmark's tiers (nominal): {@link #JITTER_TIERS} shorter than its
	 * delay, and the delay.
	 * @return the tiers, ascending
	 */
	public List<Duration> jitterTiers() {
		List<Duration> tiers = new java.util.ArrayList<>(
				JITTER_TIERS.stream().filter((tier) -> tier.compareTo(this.jitterDelay) < 0).toList());
		tiers.add(this.jitterDelay);
		return tiers;
	}

	/**
	 * The delayed-send benchmark's tiers: its smallest tier and twice it, of the default
	 * type, and the forwarding tier, which its throughput sides publish into (nothing
	 * comes back from it during a run; the harness purges it).
	 * @return the tiers, ascending
	 */
	public List<Duration> delayedSendTiers() {
		List<Duration> tiers = new java.util.ArrayList<>(
				tiers(List.of(this.delayedSendTier, this.delayedSendTier.multipliedBy(2)), DEFAULT_TIER_TYPE));
		tiers.add(forwardingTier(DEFAULT_TIER_TYPE));
		return tiers;
	}

	/**
	 * The delays of the delayed-send benchmark's precision: the smallest tier's nominal
	 * duration (one hop through that tier, 1 ms longer) and three times it (two hops: the
	 * next tier, then the smallest).
	 * @return the delays
	 */
	public List<Duration> delayedSendDelays() {
		return List.of(this.delayedSendTier, this.delayedSendTier.multipliedBy(3));
	}

	private static String property(String name, String defaultValue) {
		String value = System.getProperty("benchmarks." + name);
		return (value != null && !value.isBlank()) ? value.trim() : defaultValue;
	}

	private static List<Duration> durationsProperty(String name, List<Duration> defaultValue) {
		String value = System.getProperty("benchmarks." + name);
		if (value == null || value.isBlank()) {
			return defaultValue;
		}
		return Arrays.stream(value.split(","))
			.map((duration) -> DurationStyle.detectAndParse(duration.trim()))
			.toList();
	}

	private static double doubleProperty(String name, double defaultValue) {
		String value = property(name, String.valueOf(defaultValue));
		try {
			return Double.parseDouble(value);
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException("benchmarks." + name + " must be a number, not '" + value + "'", ex);
		}
	}

	private static int intProperty(String name, int defaultValue) {
		String value = property(name, String.valueOf(defaultValue));
		try {
			return Integer.parseInt(value);
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException("benchmarks." + name + " must be a whole number, not '" + value + "'",
					ex);
		}
	}

}
