package io.github.tieredretry.benchmarks.report;

import java.util.List;

/**
 * A benchmark whose sides were measured side by side, alternating, in the same repeats.
 *
 * @param key short name, used for file names
 * @param title the title
 * @param unit the unit of the sides' values
 * @param messagesPerRound how many messages each side handled per repeat
 * @param sides the sides
 * @param ratios the ratios that have targets
 * @param orders the order the sides ran in, per repeat
 */
public record Comparison(String key, String title, String unit, int messagesPerRound, List<SideSeries> sides,
		List<RatioSeries> ratios, List<String> orders) {

	public Comparison {
		sides = List.copyOf(sides);
		ratios = List.copyOf(ratios);
		orders = List.copyOf(orders);
	}

	public SideSeries side(String label) {
		return this.sides.stream()
			.filter((side) -> side.label().equals(label))
			.findFirst()
			.orElseThrow(() -> new IllegalArgumentException("No side " + label + " in " + this.key));
	}

}
