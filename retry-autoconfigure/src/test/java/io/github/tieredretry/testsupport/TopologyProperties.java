package io.github.tieredretry.testsupport;

import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * The properties that put a test's application on a {@link TestQueues.Topology topology}
 * of its own, so that a test names only what is particular to it.
 */
public final class TopologyProperties {

	private TopologyProperties() {
	}

	/**
	 * {@code test.work}, the topology's parking lot and tiers, and a default policy of
	 * {@code maxRetries} retries, each after the short tier.
	 * @param topology the topology
	 * @param work the work queue ({@code test.work})
	 * @param maxRetries {@code retry.defaults.max-retries}
	 * @return the properties, in a new map to add the test's own to
	 */
	public static Map<String, Object> retrying(TestQueues.Topology topology, String work, int maxRetries) {
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("test.work", work);
		properties.put("retry.parking-lot", topology.parkingLot());
		properties.put("retry.tiers", topology.tiers());
		properties.put("retry.defaults.max-retries", maxRetries);
		properties.put("retry.defaults.delays", topology.shortTier().toMillis() + "ms");
		return properties;
	}

	/**
	 * Register an application on classic tier queues, as tier names that several suites
	 * share on the test broker ({@code retry.delay.200ms}, ...) must be: its parking lot,
	 * the tiers, {@code retry.queue-type=classic} and the default number of retries.
	 * @param registry the registry of a {@code @DynamicPropertySource} method
	 * @param parkingLot {@code retry.parking-lot}
	 * @param tiers {@code retry.tiers}
	 * @param maxRetries {@code retry.defaults.max-retries}
	 */
	public static void registerClassicTiers(DynamicPropertyRegistry registry, String parkingLot, String tiers,
			int maxRetries) {
		registerClassicTiers(registry, parkingLot, tiers);
		registry.add("retry.defaults.max-retries", () -> maxRetries);
	}

	/**
	 * Register an application on classic tier queues, as
	 * {@link #registerClassicTiers(DynamicPropertyRegistry, String, String, int)} does,
	 * with the default number of retries.
	 * @param registry the registry of a {@code @DynamicPropertySource} method
	 * @param parkingLot {@code retry.parking-lot}
	 * @param tiers {@code retry.tiers}
	 */
	public static void registerClassicTiers(DynamicPropertyRegistry registry, String parkingLot, String tiers) {
		registry.add("retry.parking-lot", () -> parkingLot);
		registry.add("retry.tiers", () -> tiers);
		registry.add("retry.queue-type", () -> "classic");
	}

	/**
	 * Register a named retry policy ({@code retry.policies.<name>.*}).
	 * @param registry the registry of a {@code @DynamicPropertySource} method
	 * @param name the policy's name
	 * @param settings its settings, by their key below the policy ({@code max-retries},
	 * {@code delays}, ...)
	 */
	public static void registerPolicy(DynamicPropertyRegistry registry, String name, Map<String, ?> settings) {
		settings.forEach((key, value) -> registry.add("retry.policies." + name + "." + key, () -> value));
	}

	/**
	 * Register properties for a {@code @SpringBootTest}.
	 * @param registry the registry of a {@code @DynamicPropertySource} method
	 * @param properties the properties
	 */
	public static void register(DynamicPropertyRegistry registry, Map<String, ?> properties) {
		properties.forEach((name, value) -> registry.add(name, () -> value));
	}

}
