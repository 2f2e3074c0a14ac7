package io.github.tieredretry.benchmarks;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

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

	/**
	 * How long a stopped container may take to close its consumers: the AMQP 1.0 client's
	 * gives up after its graceful shutdown period, 30 s by default.
	 */
	private static final Duration STOP_TIMEOUT = Duration.ofSeconds(40);

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
	 * prefetched. The AMQP 1.0 client's container closes its consumers in the background:
	 * wait for it, as a container started before that would not consume.
	 */
	@Override
	public void stop() {
		MessageListenerContainer container = container();
		container.stop();
		long deadline = System.nanoTime() + STOP_TIMEOUT.toNanos();
		while (container.isRunning()) {
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException(
						"Listener '" + this.listenerId + "' still running " + STOP_TIMEOUT + " after it was stopped");
			}
			LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
		}
	}

	private MessageListenerContainer container() {
		return this.application.container(this.listenerId);
	}

}
