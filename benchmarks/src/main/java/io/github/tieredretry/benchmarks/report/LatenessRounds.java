package io.github.tieredretry.benchmarks.report;

import java.util.Arrays;
import java.util.List;

/**
 * How late each message of each measured repeat arrived (negative: early), and what the
 * reports read from it, in milliseconds.
 *
 * @param rounds the lateness of each message, per measured repeat
 * @param perMilli how many of the rounds' unit make a millisecond: 1 for milliseconds,
 * 1000 for microseconds
 */
record LatenessRounds(List<long[]> rounds, long perMilli) {

	long[] sorted() {
		return Summary.sorted(this.rounds.stream().flatMapToLong(Arrays::stream).toArray());
	}

	long percentile(double percent) {
		long[] sorted = sorted();
		return (sorted.length > 0) ? millis(Summary.percentile(sorted, percent)) : 0;
	}

	long max() {
		long[] sorted = sorted();
		return (sorted.length > 0) ? millis(sorted[sorted.length - 1]) : 0;
	}

	long min() {
		long[] sorted = sorted();
		return (sorted.length > 0) ? millis(sorted[0]) : 0;
	}

	// The percentile of each repeat, summarized over the repeats: its noise.
	Summary percentilePerRound(double percent) {
		return Summary.of(this.rounds.stream()
			.map((round) -> (double) ((round.length > 0) ? millis(Summary.percentile(Summary.sorted(round), percent))
					: 0))
			.toList());
	}

	long earlyCount() {
		return this.rounds.stream().flatMapToLong(Arrays::stream).filter((lateness) -> lateness < 0).count();
	}

	long laterThan(long millis) {
		return this.rounds.stream()
			.flatMapToLong(Arrays::stream)
			.filter((lateness) -> lateness > millis * this.perMilli)
			.count();
	}

	int count() {
		return this.rounds.stream().mapToInt((round) -> round.length).sum();
	}

	// Rounded down: an arrival a fraction of a millisecond early shows as -1 ms, not 0.
	private long millis(long lateness) {
		return Math.floorDiv(lateness, this.perMilli);
	}

}
