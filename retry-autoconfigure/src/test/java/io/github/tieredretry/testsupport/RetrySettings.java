package io.github.tieredretry.testsupport;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.tieredretry.internal.topology.RetryTopology;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.convert.DurationStyle;

/**
 * The properties that a test's application is given again and again, in one statement:
 * those of a test class's application ({@link #of(TestQueues)}: the class's queue names,
 * {@code test.queues.<role>} and {@code test.id}, and its parking lot,
 * {@link TestQueues#parkingLot()}, from the start), declared with its
 * {@link TestQueues#settings TestQueues}, or those of an application the test starts
 * itself ({@link #application()}); then its tiers, the default policy's retries and what
 * else the test sets. <pre class="code">
 * TestQueues.prefixed("misbehaviour")
 * 	.settings((settings) -&gt; settings.quorumTiers("170ms").retries(2, "170ms"));
 * </pre>
 */
public final class RetrySettings {

	private final @Nullable TestQueues queues;

	private final Map<String, Object> values = new LinkedHashMap<>();

	private RetrySettings(@Nullable TestQueues queues) {
		this.queues = queues;
	}

	/**
	 * Collect the properties of a test class's application: {@code test.id},
	 * {@code test.queues.<role>} for every queue the class has named (a listener's
	 * {@code @RabbitListener(queues = "${test.queues.work}")}), and the class's parking
	 * lot.
	 * @param queues the class's queues
	 * @return the settings, to add more
	 */
	public static RetrySettings of(TestQueues queues) {
		RetrySettings settings = new RetrySettings(queues);
		queues.properties().forEach(settings::set);
		return settings.parkingLot(queues.parkingLotName());
	}

	/**
	 * Collect the properties of an application that a test starts itself
	 * ({@link TestApplications#run}): the broker's, and no web server.
	 * @return the settings, to add more
	 */
	public static RetrySettings application() {
		RetrySettings settings = new RetrySettings(null);
		TestApplications.brokerProperties().forEach(settings::set);
		return settings.set("spring.main.web-application-type", "none");
	}

	/**
	 * The properties collected, for {@link TestApplications#run} or the application of a
	 * test class.
	 * @return a new map of them, to add the test's own to
	 */
	public Map<String, Object> toMap() {
		return new LinkedHashMap<>(this.values);
	}

	/**
	 * Another parking lot than the class's.
	 * @param parkingLot its name
	 * @return these settings
	 */
	public RetrySettings parkingLot(String parkingLot) {
		return set("retry.parking-lot", parkingLot);
	}

	/**
	 * Tiers whose names other suites share on the test broker, where they are classic
	 * queues (tier queues of one name must have one type).
	 * @param tiers the {@code retry.tiers} value
	 * @return these settings
	 */
	public RetrySettings classicTiers(String tiers) {
		return set("retry.tiers", tiers).set("retry.queue-type", "classic");
	}

	/**
	 * Quorum tiers, of names that no classic tier of another suite has: the class owns
	 * them (they are deleted after it).
	 * @param tiers the {@code retry.tiers} value
	 * @return these settings
	 */
	public RetrySettings quorumTiers(String tiers) {
		for (String tier : tiers.split(",")) {
			if (this.queues != null) {
				this.queues.owned(RetryTopology.tierQueueName(DurationStyle.detectAndParse(tier.trim())));
			}
		}
		return set("retry.tiers", tiers).set("retry.queue-type", "quorum");
	}

	/**
	 * The parking lot and tiers of a topology of the class's own.
	 * @param topology the topology
	 * @return these settings
	 */
	public RetrySettings topology(TestQueues.Topology topology) {
		return parkingLot(topology.parkingLot()).set("retry.tiers", topology.tiers());
	}

	/**
	 * The default policy's retries.
	 * @param maxRetries {@code retry.defaults.max-retries}
	 * @param delays {@code retry.defaults.delays}
	 * @return these settings
	 */
	public RetrySettings retries(int maxRetries, String delays) {
		return set("retry.defaults.max-retries", maxRetries).set("retry.defaults.delays", delays);
	}

	/**
	 * The default policy's retries, each after one delay.
	 * @param maxRetries {@code retry.defaults.max-retries}
	 * @param delay {@code retry.defaults.delays}
	 * @return these settings
	 */
	public RetrySettings retries(int maxRetries, Duration delay) {
		return retries(maxRetries, delay.toMillis() + "ms");
	}

	/**
	 * A named policy's retries.
	 * @param policy the policy's name
	 * @param maxRetries its {@code max-retries}
	 * @param delays its {@code delays}
	 * @return these settings
	 */
	public RetrySettings retries(String policy, int maxRetries, String delays) {
		return set("retry.policies." + policy + ".max-retries", maxRetries).set("retry.policies." + policy + ".delays",
				delays);
	}

	/**
	 * A named policy whose delays a quorum queue's delayed retry can make (linear ones,
	 * with the queue arguments the starter declares): on the broker backend from RabbitMQ
	 * 4.3, on the tiers before.
	 * @param policy the policy's name
	 * @param maxRetries its {@code max-retries}
	 * @param delays its {@code delays}
	 * @return these settings
	 */
	public RetrySettings brokerPolicy(String policy, int maxRetries, String delays) {
		return retries(policy, maxRetries, delays).set("retry.broker.declare-queue-arguments", true);
	}

	/**
	 * A circuit breaker's settings.
	 * @param policy the policy's name, or {@code defaults}
	 * @param slidingWindowSize its {@code sliding-window-size}
	 * @param minimumCalls its {@code minimum-calls}
	 * @param waitInOpenState its {@code wait-in-open-state}
	 * @param probesInHalfOpenState its {@code probes-in-half-open-state}
	 * @return these settings
	 */
	public RetrySettings breaker(String policy, int slidingWindowSize, int minimumCalls, String waitInOpenState,
			int probesInHalfOpenState) {
		String prefix = policy.equals("defaults") ? "retry.defaults.breaker."
				: "retry.policies." + policy + ".breaker.";
		return set(prefix + "sliding-window-size", slidingWindowSize).set(prefix + "minimum-calls", minimumCalls)
			.set(prefix + "wait-in-open-state", waitInOpenState)
			.set(prefix + "probes-in-half-open-state", probesInHalfOpenState);
	}

	/**
	 * Any other property; a later value replaces an earlier one.
	 * @param name its name
	 * @param value its value
	 * @return these settings
	 */
	public RetrySettings set(String name, Object value) {
		this.values.put(name, value);
		return this;
	}

}
