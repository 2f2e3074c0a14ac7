package io.github.tieredretry.benchmarks;

import io.github.tieredretry.benchmarks.app.Workload;
import io.github.tieredretry.benchmarks.broker.BrokerOperations;

/**
 * One side of a comparison: a consumer of a queue of this run, running only while it is
 * measured, so that sides never compete for the machine.
 */
interface MeasuredSide {

	/**
	 * The side's label in the report.
	 * @return the label
	 */
	String label();

	/**
	 * The queue it consumes, owned by this run.
	 * @return the queue's name
	 */
	String queue();

	/**
	 * What it does with each message, and what the harness measures of it.
	 * @return the workload
	 */
	Workload workload();

	/**
	 * Start consuming.
	 */
	void start();

	/**
	 * Stop consuming: the message in hand is finished, what was prefetched goes back to
	 * the queue.
	 */
	void stop();

	/**
	 * Empty the queue and start a round of the workload.
	 * @param broker the broker
	 * @param roundId the round's id
	 * @param successes messages expected to be processed
	 * @param healthy of which never fail
	 * @param forwards failures expected to be forwarded
	 * @param recordLateness whether to record the lateness of retries
	 * @return the round
	 */
	default Workload.Round prepare(BrokerOperations broker, String roundId, int successes, int healthy, int forwards,
			boolean recordLateness) {
		broker.purge(queue());
		return workload().startRound(roundId, successes, healthy, forwards, recordLateness);
	}

}
