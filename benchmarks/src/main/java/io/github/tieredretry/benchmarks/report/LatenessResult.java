package io.github.tieredretry.benchmarks.report;

/**
 * How late retries through one tier reached the listener, after their due time.
 *
 * @param tier the tier, e.g. {@code 1s}
 * @param messages messages sent through it
 * @param perSecond the rate at which they were published (and failed)
 * @param latenessMillis lateness of each retry, in ms (negative: early)
 */
public record LatenessResult(String tier, int messages, int perSecond, long[] latenessMillis) {

	public long[] sortedLateness() {
		return Summary.sorted(this.latenessMillis);
	}

	public long percentile(double percent) {
		return Summary.percentile(sortedLateness(), percent);
	}

	public long max() {
		return sortedLateness()[this.latenessMillis.length - 1];
	}

	public long min() {
		return sortedLateness()[0];
	}

	/**
	 * Retries the listener received before they were due.
	 * @return how many
	 */
	public long earlyCount() {
		long early = 0;
		for (long lateness : this.latenessMillis) {
			if (lateness < 0) {
				early++;
			}
		}
		return early;
	}

	/**
	 * The target: p99 lateness at most 250 ms and no early delivery.
	 * @return whether it is met
	 */
	public boolean met() {
		return this.latenessMillis.length == this.messages && earlyCount() == 0 && percentile(99) <= 250;
	}

}
