package io.github.tieredretry.reliability;

import java.util.List;

import org.springframework.beans.factory.DisposableBean;

/**
 * Deletes a test's queues when its application context closes: after the listener containers have
 * stopped, so that no container declares them again (as it would if they were deleted under it).
 */
final class QueueCleanup implements DisposableBean {

	private final IsolatedTopology topology;

	private final List<String> workQueues;

	QueueCleanup(IsolatedTopology topology, String... workQueues) {
		this.topology = topology;
		this.workQueues = List.of(workQueues);
	}

	@Override
	public void destroy() {
		this.topology.delete(this.workQueues.toArray(String[]::new));
	}

}
