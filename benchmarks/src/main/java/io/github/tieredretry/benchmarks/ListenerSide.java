package io.github.tieredretry.benchmarks;

import io.github.tieredretry.benchmarks.app.Workload;
import io.github.tieredretry.benchmarks.broker.BrokerOperations;

import org.springframework.amqp.core.MessageListenerContainer;

/**
 * One side of a comparison: a listener of a running application, and the queue it consumes. Its container
 * runs only while the side is measured, so that sides never compete for the machine.
 *
 * @param label the side's label in the report
 * @param application the application
 * @param listenerId the listener's id
 * @param queue its queue, owned by this run
 */
record ListenerSide(String label, RunningApplication application, String listenerId, String queue) {

	/**
	 * Empty the queue and start a round of the listener's workload.
	 * @param broker the broker
	 * @param roundId the round's id
	 * @param successes messages expected to be processed
	 * @param healthy of which never fail
	 * @param forwards failures expected to be forwarded
	 * @param recordLateness whether to record the lateness of retries
	 * @return the round
	 */
	Workload.Round prepare(BrokerOperations broker, String roundId, int successes, int healthy, int forwards,
			boolean recordLateness) {
		broker.purge(this.queue);
		return this.application.workload(this.queue).startRound(roundId, successes, healthy, forwards, recordLateness);
	}

	void start() {
		container().start();
	}

	/**
	 * Stop the container: it finishes the message in hand and gives back what it had prefetched.
	 */
	void stop() {
		container().stop();
	}

	private MessageListenerContainer container() {
		return this.application.container(this.listenerId);
	}

}
