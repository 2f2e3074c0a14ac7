package io.github.tieredretry.benchmarks;

import io.github.tieredretry.benchmarks.app.Workload;

import org.springframework.amqp.core.MessageListenerContainer;

/**
 * A side that is the listener of a running application; its container runs only while the
 * side is measured.
 *
 * @param label the side's label in the report
 * @param application the application
 * @param listenerId the listener's id
 * @param queue its queue, owned by this run
 */
record ListenerSide(String label, RunningApplication application, String listenerId,
		String queue) implements MeasuredSide {

	@Override
	public Workload workload() {
		return this.application.workload(this.queue);
	}

	@Override
	public void start() {
		container().start();
	}

	/**
	 * Stop the container: it finishes the message in hand and gives back what it had
	 * prefetched.
	 */
	@Override
	public void stop() {
		container().stop();
	}

	private MessageListenerContainer container() {
		return this.application.container(this.listenerId);
	}

}
