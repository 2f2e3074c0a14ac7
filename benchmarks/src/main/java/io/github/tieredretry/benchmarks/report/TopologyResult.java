package io.github.tieredretry.benchmarks.report;

import java.util.List;

/**
 * Broker objects for many retryable listeners: shared tiers against one set per queue.
 *
 * @param listeners the number of listeners (one work queue each)
 * @param tiers the tiers
 * @param tiered what the starter declares
 * @param perQueue what a per-queue design declares
 * @param verifiedOnBroker whether every counted queue and exchange was found on the
 * broker
 */
public record TopologyResult(int listeners, List<String> tiers, ObjectCounts tiered, ObjectCounts perQueue,
		boolean verifiedOnBroker) {

}
