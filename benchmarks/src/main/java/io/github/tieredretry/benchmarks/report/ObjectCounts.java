package io.github.tieredretry.benchmarks.report;

/**
 * Broker objects an application declares for its retries (its work queues not included).
 *
 * @param queues queues
 * @param exchanges exchanges
 * @param bindings bindings
 */
public record ObjectCounts(int queues, int exchanges, int bindings) {

	public int total() {
		return this.queues + this.exchanges + this.bindings;
	}

}
