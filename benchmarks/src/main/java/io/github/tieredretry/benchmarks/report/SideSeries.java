package io.github.tieredretry.benchmarks.report;

import java.util.List;

/**
 * One side of a comparison: its measurement in each repeat.
 *
 * @param label what was measured, e.g. {@code @RetryableListener}
 * @param values one value per repeat, in repeat order
 */
public record SideSeries(String label, List<Double> values) {

	public SideSeries {
		values = List.copyOf(values);
	}

	public Summary summary() {
		return Summary.of(this.values);
	}

}
