package io.github.tieredretry.benchmarks.app;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

/**
 * The workload of each listener of an application, by the queue it consumes.
 */
public final class Workloads {

	private final Map<String, Workload> byQueue = new ConcurrentHashMap<>();

	private final long workNanos;

	/**
	 * Create the workloads.
	 * @param work how long each listener invocation works (waits, like a call to a
	 * database), before it succeeds or fails
	 */
	public Workloads(Duration work) {
		this.workNanos = work.toNanos();
	}

	/**
	 * The workload of the listener on a queue.
	 * @param queue the queue
	 * @return its workload, created on first use
	 */
	public Workload forQueue(@Nullable String queue) {
		return this.byQueue.computeIfAbsent(String.valueOf(queue), (name) -> new Workload(this.workNanos));
	}

}
