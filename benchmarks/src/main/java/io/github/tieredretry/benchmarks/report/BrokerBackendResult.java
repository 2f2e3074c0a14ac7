package io.github.tieredretry.benchmarks.report;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The tiers against the broker backend (RabbitMQ 4.3's delayed retry), side by side: the
 * same listeners on quorum work queues, their retries forwarded to quorum tiers or held
 * by their queue; for the lateness also a listener of the RabbitMQ AMQP 1.0 client, its
 * retries held by its queue until the delivery time of each. Run on RabbitMQ 4.3 or later
 * only; on an older broker it says why not.
 *
 * @param broker the broker, e.g. {@code RabbitMQ 4.3.6}
 * @param notRun why the benchmark was not run, or {@code null} when it was
 * @param storm the healthy messages' throughput while 5% fail twice, per backend
 * @param forwarding failed messages retried per second, per backend
 * @param accuracy how late retries arrived after their due time, per side: the tiers, the
 * broker backend (the queue's delayed retry), then the listener of the RabbitMQ AMQP 1.0
 * client (a delivery time per message)
 * @param topology the broker objects declared for many listeners, per backend
 */
public record BrokerBackendResult(String broker, @Nullable String notRun, @Nullable Comparison storm,
		@Nullable Comparison forwarding, List<Lateness> accuracy, @Nullable Topology topology) {

	public BrokerBackendResult {
		accuracy = List.copyOf(accuracy);
	}

	/**
	 * A benchmark that did not run.
	 * @param broker the broker
	 * @param reason why, e.g. {@code RabbitMQ 4.0.5 has no delayed retry (4.3 or later
	 * has)}
	 * @return the result
	 */
	public static BrokerBackendResult notRun(String broker, String reason) {
		return new BrokerBackendResult(broker, reason, null, null, List.of(), null);
	}

	/**
	 * Whether the benchmark ran.
	 * @return whether it did
	 */
	public boolean ran() {
		return this.notRun == null;
	}

	/**
	 * The comparisons, for the ratio table and the charts.
	 * @return the storm and the forwarding comparison, if run
	 */
	public List<Comparison> comparisons() {
		return (this.storm != null && this.forwarding != null) ? List.of(this.storm, this.forwarding) : List.of();
	}

	/**
	 * How late one backend's retries arrived after their due time: when the message
	 * failed plus the policy's delay, as the starter announced it (header
	 * {@code retry-due} on the tiers; the broker backend writes nothing into the message,
	 * so its {@code RetryScheduledEvent}'s due time).
	 *
	 * @param label the side's label
	 * @param delay the policy's delay, e.g. {@code 1001ms}
	 * @param messagesPerRound messages per round, each failing once
	 * @param rounds the lateness of each retry, in ms (negative: early), per measured
	 * repeat
	 */
	public record Lateness(String label, String delay, int messagesPerRound, List<long[]> rounds) {

		public Lateness {
			rounds = List.copyOf(rounds);
		}

		/**
		 * A percentile over every measured repeat's retries.
		 * @param percent e.g. 99
		 * @return the lateness in milliseconds
		 */
		public long percentile(double percent) {
			return lateness().percentile(percent);
		}

		public long max() {
			return lateness().max();
		}

		/**
		 * A percentile of each repeat, summarized over the repeats: the noise of that
		 * percentile.
		 * @param percent e.g. 99
		 * @return min, median and max over the repeats
		 */
		public Summary percentilePerRound(double percent) {
			return lateness().percentilePerRound(percent);
		}

		/**
		 * Retries that arrived before they were due.
		 * @return how many
		 */
		public long earlyCount() {
			return lateness().earlyCount();
		}

		/**
		 * Retries measured, over every measured repeat.
		 * @return how many
		 */
		public int count() {
			return lateness().count();
		}

		private LatenessRounds lateness() {
			return new LatenessRounds(this.rounds, 1);
		}

	}

	/**
	 * The broker objects an application declares for many retryable listeners, on each
	 * backend. On the broker backend the starter still declares the tiers, the parking
	 * lot and the exchanges: a retry only never goes through them.
	 *
	 * @param listeners the listeners, one quorum work queue each (not counted)
	 * @param tiers the tiers
	 * @param onTiers what the application declares with its listeners on the tiers
	 * @param onBroker what it declares with them on the broker backend
	 * @param listenersOnTheBroker how many listeners the broker held retries for in the
	 * second application
	 * @param verifiedOnBroker whether every counted queue and exchange was found on the
	 * broker
	 */
	public record Topology(int listeners, List<String> tiers, ObjectCounts onTiers, ObjectCounts onBroker,
			int listenersOnTheBroker, boolean verifiedOnBroker) {

		public Topology {
			tiers = List.copyOf(tiers);
		}

	}

}
