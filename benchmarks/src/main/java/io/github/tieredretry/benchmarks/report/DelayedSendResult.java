package io.github.tieredretry.benchmarks.report;

import java.util.List;

/**
 * Delayed sends ({@code DelayedSender}): how late they reached a queue bound to their
 * target exchange after a delay of one tier and after one composed of two hops, and how
 * fast they are sent beside a plain confirmed publish of the same messages into the same
 * quorum tier, one at a time and pipelined.
 *
 * @param tiers the application's tiers, e.g. {@code 1001ms}
 * @param smallestTierMillis its smallest tier: the promise is never early, and late by at
 * most that (plus the broker's latency per hop)
 * @param precision the lateness per delay
 * @param throughput sends per second per side, and the ratios delayed ÷ plain
 * @param window how many sends the pipelined sides hold unconfirmed at most
 */
public record DelayedSendResult(List<String> tiers, long smallestTierMillis, List<Lateness> precision,
		Comparison throughput, int window) {

	public DelayedSendResult {
		tiers = List.copyOf(tiers);
		precision = List.copyOf(precision);
	}

	/**
	 * How late the sends of one delay arrived: arrival at the target queue's consumer
	 * minus (the time just before {@code DelayedSender.send} was called + the delay),
	 * both read from the same JVM's clock.
	 *
	 * @param label the side's label
	 * @param delay the delay, e.g. {@code 3s}
	 * @param hops the tiers it goes through, e.g. {@code 2001ms + 1001ms}
	 * @param messagesPerRound sends per round
	 * @param rounds the lateness of each send, in microseconds (negative: early), per
	 * measured repeat
	 * @param duplicates sends that arrived more than once, over every measured repeat
	 */
	public record Lateness(String label, String delay, String hops, int messagesPerRound, List<long[]> rounds,
			long duplicates) {

		public Lateness {
			rounds = List.copyOf(rounds);
		}

		/**
		 * A percentile over every measured repeat's sends.
		 * @param percent e.g. 99
		 * @return the lateness in milliseconds (rounded down)
		 */
		public long percentile(double percent) {
			return lateness().percentile(percent);
		}

		public long max() {
			return lateness().max();
		}

		public long min() {
			return lateness().min();
		}

		/**
		 * A percentile of each repeat, summarized over the repeats: the noise of that
		 * percentile.
		 * @param percent e.g. 99
		 * @return min, median and max over the repeats, in milliseconds
		 */
		public Summary percentilePerRound(double percent) {
			return lateness().percentilePerRound(percent);
		}

		/**
		 * Sends that arrived before they were due: the sender promises none.
		 * @return how many
		 */
		public long earlyCount() {
			return lateness().earlyCount();
		}

		/**
		 * Sends that arrived later than a bound after they were due.
		 * @param millis the bound
		 * @return how many
		 */
		public long laterThan(long millis) {
			return lateness().laterThan(millis);
		}

		/**
		 * Sends measured, over every measured repeat.
		 * @return how many
		 */
		public int count() {
			return lateness().count();
		}

		private LatenessRounds lateness() {
			return new LatenessRounds(this.rounds, 1000);
		}

	}

}
