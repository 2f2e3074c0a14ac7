package io.github.tieredretry.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.github.tieredretry.benchmarks.app.BenchmarkListeners;
import io.github.tieredretry.benchmarks.app.Workload;
import io.github.tieredretry.benchmarks.broker.MessagePublisher.Failures;
import io.github.tieredretry.benchmarks.report.BrokerBackendResult;
import io.github.tieredretry.benchmarks.report.Comparison;
import io.github.tieredretry.benchmarks.report.RatioSeries;
import io.github.tieredretry.benchmarks.report.Summary;
import io.github.tieredretry.internal.policy.BackendChooser;
import io.github.tieredretry.internal.policy.TierLadder;
import org.jspecify.annotations.Nullable;

/**
 * Benchmark 8 (issue #23): the two ways to wait side by side, on RabbitMQ 4.3 or later.
 * The same listeners, in one application, each on a quorum work queue of its own, once on
 * the tiers (a retry is forwarded to a quorum tier with a confirm, then the original is
 * acknowledged; the tier dead-letters it back) and once on the broker backend (the failed
 * delivery is given back with {@code basic.reject}, and the queue's delayed retry holds
 * it for {@code min × x-delivery-count}). Measured: the healthy messages' throughput
 * while 5% fail twice, failed messages retried per second, how late retries arrive after
 * their due time, and the broker objects declared for many listeners. The lateness has a
 * third side: the same listener on the RabbitMQ AMQP 1.0 client, whose failed message
 * goes back to its quorum queue with a delivery time ({@code x-opt-delivery-time}), with
 * a policy no queue argument makes (jitter). On an older broker nothing runs, and the
 * result says why.
 */
final class BrokerBackendBenchmark {

	static final String STORM_NO_FAILURES = "quorum work queue, no failures";

	static final String STORM_TIERS = "retries in quorum tiers, 5% fail twice";

	static final String STORM_BROKER = "retries held by the queue (broker backend), 5% fail twice";

	static final String FORWARDING_TIERS = "tiers: confirmed forward to a quorum tier";

	static final String FORWARDING_BROKER = "broker backend: basic.reject into the queue's delayed retry";

	static final String ACCURACY_TIERS = "tiers: quorum tier";

	static final String ACCURACY_BROKER = "broker backend: the queue's delayed retry";

	static final String ACCURACY_AMQP = "AMQP 1.0 client: the queue holds it until its delivery time";

	private BrokerBackendBenchmark() {
	}

	static BrokerBackendResult run(RunContext run) {
		String version = run.broker().version();
		String broker = "RabbitMQ " + version;
		String notRun = whyNotRun(version, run.settings().stormDelays());
		if (notRun != null) {
			run.log("[broker-backend] not run: " + notRun);
			return BrokerBackendResult.notRun(broker, notRun);
		}
		// Its broker sides ask for backend = BROKER: startup fails, saying why, if the
		// broker cannot hold their retries, instead of measuring the tiers twice.
		run.application(RunContext.BROKER_BACKEND);
		Comparison storm = storm(run);
		Comparison forwarding = forwarding(run);
		List<BrokerBackendResult.Lateness> accuracy = accuracy(run);
		BrokerBackendResult.Topology topology = topology(run);
		return new BrokerBackendResult(broker, null, storm, forwarding, accuracy, topology);
	}

	/**
	 * Why the benchmark cannot run.
	 * @param version the broker's version, e.g. {@code 4.3.6}
	 * @param stormDelays the storm's nominal delays
	 * @return the reason, or {@code null} when it can run
	 */
	static @Nullable String whyNotRun(String version, List<Duration> stormDelays) {
		if (!BackendChooser.canHoldRetries(version)) {
			return "RabbitMQ " + version + " has no delayed retry (4.3 or later has)";
		}
		for (int retry = 1; retry <= stormDelays.size(); retry++) {
			if (!stormDelays.get(retry - 1).equals(stormDelays.get(0).multipliedBy(retry))) {
				return "benchmarks.storm.delays "
						+ stormDelays.stream().map(TierLadder::nameOf).collect(Collectors.joining(", "))
						+ " do not grow linearly (d, 2d), the only delays a queue's delayed retry makes";
			}
		}
		return null;
	}

	// Benchmark 2's storm on quorum work queues: the same listener on each backend, and
	// without failures (no retry runs: the backend makes no difference).
	private static Comparison storm(RunContext run) {
		int messages = run.settings().stormMessages();
		Failures storm = new Failures(BenchmarkSettings.STORM_FAILING_EVERY, BenchmarkSettings.STORM_FAILING_ATTEMPTS);
		int healthy = messages - storm.failingCount(messages);
		ListenerSide tiers = side(run, STORM_TIERS, BenchmarkListeners.BACKEND_STORM_TIERS);
		ListenerSide broker = side(run, STORM_BROKER, BenchmarkListeners.BACKEND_STORM_BROKER);
		Map<String, Alternation.Measurement> sides = new LinkedHashMap<>();
		sides.put(STORM_NO_FAILURES, HappyPathBenchmark.backlogOf(run, broker, messages));
		sides.put(STORM_TIERS, FailureStormBenchmark.tieredStorm(run, tiers, messages, storm, healthy));
		sides.put(STORM_BROKER, FailureStormBenchmark.tieredStorm(run, broker, messages, storm, healthy));
		Alternation.Outcome outcome = run.alternate("broker-backend-storm", sides);
		checkRetriesRanOn(tiers, false);
		checkRetriesRanOn(broker, true);
		return new Comparison("broker-backend-storm", "8. Broker backend: failure storm, throughput of the healthy 95%",
				"healthy messages/s", messages, outcome.allSeries(),
				List.of(RatioSeries.of("broker backend ÷ tiers, storm", outcome.series(STORM_BROKER),
						outcome.series(STORM_TIERS), Double.NaN),
						RatioSeries.of("tiers storm ÷ without failures", outcome.series(STORM_TIERS),
								outcome.series(STORM_NO_FAILURES), Double.NaN),
						RatioSeries.of("broker backend storm ÷ without failures", outcome.series(STORM_BROKER),
								outcome.series(STORM_NO_FAILURES), Double.NaN)),
				outcome.orders());
	}

	// Benchmark 3's backlog of messages that all fail once, with one retry after 47 min:
	// counted when the starter announces the retry (after the forward's confirm on the
	// tiers, after the reject on the broker backend, which the broker does not confirm).
	private static Comparison forwarding(RunContext run) {
		int messages = run.settings().forwardingMessages();
		run.purgeForwardingTiers();
		ListenerSide tiers = side(run, FORWARDING_TIERS, BenchmarkListeners.BACKEND_FORWARDING_TIERS);
		ListenerSide broker = side(run, FORWARDING_BROKER, BenchmarkListeners.BACKEND_FORWARDING_BROKER);
		Map<String, Alternation.Measurement> sides = new LinkedHashMap<>();
		sides.put(FORWARDING_TIERS, ForwardingRateBenchmark.forwardAll(run, tiers, messages));
		sides.put(FORWARDING_BROKER, ForwardingRateBenchmark.forwardAll(run, broker, messages));
		Alternation.Outcome outcome;
		try {
			outcome = run.alternate("broker-backend-forwarding", sides);
		}
		finally {
			// The last round's retries wait in the queue for 47 min: nobody wants them.
			run.broker().purge(broker.queue());
		}
		checkRetriesRanOn(tiers, false);
		checkRetriesRanOn(broker, true);
		return new Comparison("broker-backend-forwarding", "8. Broker backend: failed messages retried per second",
				"retries/s", messages, outcome.allSeries(),
				List.of(RatioSeries.of("broker backend ÷ tiers, retries scheduled per second",
						outcome.series(FORWARDING_BROKER), outcome.series(FORWARDING_TIERS), Double.NaN)),
				outcome.orders());
	}

	// Benchmark 4's paced stream of messages that fail once, with one retry after 1 s;
	// the listener records how long after its due time each retry arrived. The AMQP 1.0
	// client's side draws its delay with jitter, each due time as its event announced it.
	private static List<BrokerBackendResult.Lateness> accuracy(RunContext run) {
		BenchmarkSettings settings = run.settings();
		int messages = settings.brokerAccuracyMessages();
		int rate = settings.accuracyRate();
		String tiersDelay = TierLadder
			.nameOf(settings.policyDelays(BenchmarkListeners.ACCURACY, BenchmarkSettings.DEFAULT_TIER_TYPE).get(0));
		String brokerDelay = TierLadder
			.nameOf(settings.brokerPolicyDelays(BenchmarkListeners.BACKEND_ACCURACY_BROKER).get(0));
		String amqpDelay = amqpDelay(settings);
		ListenerSide tiers = side(run, ACCURACY_TIERS + " " + tiersDelay, BenchmarkListeners.BACKEND_ACCURACY_TIERS);
		ListenerSide broker = side(run, ACCURACY_BROKER + " " + brokerDelay,
				BenchmarkListeners.BACKEND_ACCURACY_BROKER);
		ListenerSide amqp = side(run, ACCURACY_AMQP + " " + amqpDelay, BenchmarkListeners.BACKEND_ACCURACY_AMQP);
		Map<String, Alternation.RoundMeasurement<long[]>> sides = new LinkedHashMap<>();
		for (ListenerSide side : List.of(tiers, broker, amqp)) {
			sides.put(side.label(), (label, roundId) -> lateness(run, side, roundId, messages, rate));
		}
		run.log("[broker-backend] delay accuracy: " + messages + " messages per side and repeat at " + rate
				+ "/s, each failing once; one retry after " + tiersDelay + " (tiers), " + brokerDelay
				+ " (broker backend) and " + amqpDelay + " (AMQP 1.0 client, delivery time)");
		Alternation.Rounds<long[]> rounds = run.alternate("broker-backend-accuracy", sides, settings.repeats(),
				settings.warmups(), BrokerBackendBenchmark::describe);
		checkRetriesRanOn(tiers, false);
		checkRetriesRanOn(broker, true);
		checkRetriesRanOn(amqp, true);
		checkDelaysDrawn(amqp, settings.brokerPolicyDelays(BenchmarkListeners.BACKEND_ACCURACY_AMQP).get(0),
				BenchmarkSettings.AMQP_ACCURACY_JITTER);
		run.log("[broker-backend] " + amqp.label() + ": delays drawn from " + amqp.workload().shortestDelayMillis()
				+ " to " + amqp.workload().longestDelayMillis() + " ms");
		List<BrokerBackendResult.Lateness> results = new ArrayList<>();
		results.add(new BrokerBackendResult.Lateness(tiers.label(), tiersDelay, messages,
				rounds.values().get(tiers.label())));
		results.add(new BrokerBackendResult.Lateness(broker.label(), brokerDelay, messages,
				rounds.values().get(broker.label())));
		results.add(
				new BrokerBackendResult.Lateness(amqp.label(), amqpDelay, messages, rounds.values().get(amqp.label())));
		for (BrokerBackendResult.Lateness result : results) {
			run.log("[broker-backend] " + result.label() + ": " + result.count() + " retries, p50 "
					+ result.percentile(50) + " ms, p99 " + result.percentile(99) + " ms, max " + result.max()
					+ " ms, early " + result.earlyCount());
		}
		return results;
	}

	/**
	 * The policy's delay of the side on the AMQP 1.0 client, as the report shows it.
	 * @param settings the settings
	 * @return e.g. {@code 1s ± 20%}
	 */
	static String amqpDelay(BenchmarkSettings settings) {
		return TierLadder.nameOf(settings.brokerPolicyDelays(BenchmarkListeners.BACKEND_ACCURACY_AMQP).get(0)) + " ± "
				+ Math.round(BenchmarkSettings.AMQP_ACCURACY_JITTER * 100) + "%";
	}

	private static long[] lateness(RunContext run, ListenerSide side, String roundId, int messages, int rate) {
		Workload.Round round = side.prepare(run.broker(), roundId, messages, 0, messages, true);
		side.start();
		try {
			run.publisher().publishPaced(side.queue(), roundId, messages, rate, Failures.all(1));
			round.awaitAllProcessed(RunContext.roundTimeout(messages));
		}
		finally {
			side.stop();
		}
		return round.latenessMillis();
	}

	private static String describe(long[] lateness) {
		if (lateness.length == 0) {
			return "no retry measured";
		}
		long[] sorted = lateness.clone();
		java.util.Arrays.sort(sorted);
		return "p50 " + Summary.percentile(sorted, 50) + " ms, p99 " + Summary.percentile(sorted, 99) + " ms, max "
				+ sorted[sorted.length - 1] + " ms, " + lateness.length + " retries";
	}

	// Benchmark 5's many listeners, on quorum work queues that the application declares,
	// with the same policy (linear delays, which the queue's delayed retry makes) on each
	// backend: what the starter declares for their retries.
	private static BrokerBackendResult.Topology topology(RunContext run) {
		int listeners = run.settings().topologyListeners();
		List<Duration> tiers = BenchmarkSettings.tiers(BenchmarkSettings.TOPOLOGY_TIERS,
				BenchmarkSettings.DEFAULT_TIER_TYPE);
		TopologyBenchmark.Verified onTiers = topologyOn(run, "tiers", listeners, tiers);
		TopologyBenchmark.Verified onBroker = topologyOn(run, "broker", listeners, tiers);
		if (onTiers.listenersOnTheBroker() != 0 || onBroker.listenersOnTheBroker() != listeners) {
			throw new IllegalStateException("The broker held the retries of " + onTiers.listenersOnTheBroker()
					+ " listeners on the tiers and of " + onBroker.listenersOnTheBroker() + " of " + listeners
					+ " listeners on the broker backend");
		}
		run.log("[broker-backend] topology, " + listeners + " listeners: on the tiers " + onTiers.counts()
				+ ", on the broker backend " + onBroker.counts());
		return new BrokerBackendResult.Topology(listeners, tiers.stream().map(TierLadder::nameOf).toList(),
				onTiers.counts(), onBroker.counts(), onBroker.listenersOnTheBroker(),
				onTiers.verified() && onBroker.verified());
	}

	private static TopologyBenchmark.Verified topologyOn(RunContext run, String backend, int listeners,
			List<Duration> tiers) {
		List<String> queues = IntStream.range(0, listeners)
			.mapToObj((index) -> run.runId() + "-topology-" + backend + "-" + index)
			.toList();
		queues.forEach(run.broker()::ownQueueDeclaredElsewhere);
		Map<String, String> properties = new LinkedHashMap<>();
		properties.put("benchmarks.topology.work-queues", "quorum");
		properties.put("retry.broker.declare-queue-arguments", "true");
		properties.put("retry.defaults.backend", backend);
		properties.put("retry.defaults.max-retries", "3");
		properties.put("retry.defaults.delays", "1s, 2s, 3s");
		return TopologyBenchmark.start(run, "backend-" + backend, "tiered", queues, tiers, properties);
	}

	private static ListenerSide side(RunContext run, String label, String listener) {
		return run.side(label, RunContext.BROKER_BACKEND, listener);
	}

	// The side's delays were drawn with its jitter, as its label says: all within
	// delay × (1 ± jitter), spread over at least half of that range.
	private static void checkDelaysDrawn(ListenerSide side, Duration delay, double jitter) {
		long shortest = side.workload().shortestDelayMillis();
		long longest = side.workload().longestDelayMillis();
		long low = (long) Math.floor(delay.toMillis() * (1 - jitter));
		long high = (long) Math.ceil(delay.toMillis() * (1 + jitter));
		if (shortest < low || longest > high || longest - shortest < (high - low) / 2) {
			throw new IllegalStateException("Side '" + side.label() + "': delays drawn from " + shortest + " to "
					+ longest + " ms, expected " + low + " to " + high + " ms and spread over at least half of it");
		}
	}

	// Every retry of a side waited where it should: the starter's events name the tier,
	// or 'broker' for a retry the queue holds.
	private static void checkRetriesRanOn(ListenerSide side, boolean broker) {
		Workload workload = side.workload();
		long wrong = broker ? workload.retriesInTiers() : workload.retriesOnBroker();
		long right = broker ? workload.retriesOnBroker() : workload.retriesInTiers();
		if (wrong > 0 || right == 0) {
			throw new IllegalStateException("Side '" + side.label() + "': " + workload.retriesOnBroker()
					+ " retries held by the broker and " + workload.retriesInTiers() + " forwarded to tiers, expected "
					+ (broker ? "every retry held by the broker" : "every retry in the tiers"));
		}
	}

}
