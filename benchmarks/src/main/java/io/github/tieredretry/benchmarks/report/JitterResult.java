package io.github.tieredretry.benchmarks.report;

import java.util.Arrays;
import java.util.List;

/**
 * Retries of messages that failed together, with and without jitter: the peak arrival
 * rate at the listener per side and repeat (a comparison with its ratio), when the
 * retries of one repeat arrived, and how late they were after their {@code retry-due}.
 *
 * @param peaks the peak arrival rate per side and repeat, and the ratio of the sides
 * @param sides what each side's retries did, in the order of the report
 */
public record JitterResult(Comparison peaks, List<Side> sides) {

	public JitterResult {
		sides = List.copyOf(sides);
	}

	/**
	 * What one side's retries did.
	 *
	 * @param label the side's label, as in the comparison
	 * @param arrivalsMillis when each retry of the last repeat reached the listener, in
	 * milliseconds after the round's first failure
	 * @param latenessMillis how late every retry of every round (warm-ups included)
	 * arrived after its {@code retry-due} (negative: early)
	 */
	public record Side(String label, long[] arrivalsMillis, long[] latenessMillis) {

		/**
		 * Retries that arrived before their due time.
		 * @return how many
		 */
		public long earlyCount() {
			return Arrays.stream(this.latenessMillis).filter((lateness) -> lateness < 0).count();
		}

		/**
		 * A percentile of the lateness.
		 * @param percentile e.g. 99
		 * @return the lateness in milliseconds
		 */
		public long latenessPercentile(double percentile) {
			long[] sorted = this.latenessMillis.clone();
			Arrays.sort(sorted);
			return (sorted.length > 0) ? Summary.percentile(sorted, percentile) : 0;
		}

		/**
		 * From the first retry of the last repeat to its last.
		 * @return milliseconds
		 */
		public long spreadMillis() {
			return (this.arrivalsMillis.length > 0) ? Arrays.stream(this.arrivalsMillis).max().getAsLong()
					- Arrays.stream(this.arrivalsMillis).min().getAsLong() : 0;
		}

	}

}
