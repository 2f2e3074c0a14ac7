package io.github.tieredretry.benchmarks.report;

import java.util.Arrays;
import java.util.List;

/**
 * Minimum, median and maximum of repeated measurements.
 *
 * @param min the smallest
 * @param median the median (mean of the two middle values for an even count)
 * @param max the largest
 */
public record Summary(double min, double median, double max) {

	/**
	 * Summarize values.
	 * @param values at least one value
	 * @return the summary
	 */
	public static Summary of(List<Double> values) {
		if (values.isEmpty()) {
			throw new IllegalArgumentException("Nothing to summarize");
		}
		double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
		int middle = sorted.length / 2;
		double median = (sorted.length % 2 == 1) ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
		return new Summary(sorted[0], median, sorted[sorted.length - 1]);
	}

	/**
	 * The nearest-rank percentile of sorted values.
	 * @param sorted values in ascending order, at least one
	 * @param percent e.g. 99.0
	 * @return the smallest value such that at least {@code percent}% of the values are
	 * less or equal
	 */
	public static long percentile(long[] sorted, double percent) {
		if (sorted.length == 0) {
			throw new IllegalArgumentException("No values");
		}
		int rank = (int) Math.ceil(percent / 100.0 * sorted.length);
		return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
	}

	static long[] sorted(long[] values) {
		long[] copy = values.clone();
		Arrays.sort(copy);
		return copy;
	}

}
