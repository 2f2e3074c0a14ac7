package io.github.tieredretry.testsupport;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The properties that put an application a test starts itself on a
 * {@link TestQueues.Topology topology} of its own, so that a test names only what is
 * particular to it.
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

}
