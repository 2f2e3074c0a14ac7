package io.github.tieredretry.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;

import io.github.tieredretry.benchmarks.report.SideSeries;

/**
 * Runs the sides of a comparison side by side: in every repeat each side once, one after
 * the other, the order rotated from repeat to repeat so that no side always runs first
 * (or right after the same neighbour) while the machine's load drifts. Warm-up repeats
 * run the same way and are discarded.
 */
final class Alternation {

	private Alternation() {
	}

	/** Measures one side once. */
	@FunctionalInterface
	interface Measurement {

		/**
		 * Measure a side.
		 * @param side the side's label
		 * @param roundId an id unique to this measurement
		 * @return the measured value
		 */
		double measure(String side, String roundId);

	}

	/**
	 * Measures one side once, when a round yields more than one figure.
	 *
	 * @param <T> what a round yields
	 */
	@FunctionalInterface
	interface RoundMeasurement<T> {

		/**
		 * Measure a side.
		 * @param side the side's label
		 * @param roundId an id unique to this measurement
		 * @return what the round measured
		 */
		T measure(String side, String roundId);

	}

	/**
	 * What the repeats' rounds yielded.
	 *
	 * @param <T> what a round yields
	 * @param values per side (in the given order), one per measured repeat
	 * @param orders the order of the sides in each measured repeat
	 */
	record Rounds<T>(Map<String, List<T>> values, List<String> orders) {

	}

	/**
	 * What the repeats measured.
	 *
	 * @param values per side (in the given order), one value per measured repeat
	 * @param orders the order of the sides in each measured repeat
	 */
	record Outcome(Map<String, List<Double>> values, List<String> orders) {

		/**
		 * What one side measured.
		 * @param side the side's label
		 * @return its values, one per measured repeat
		 */
		SideSeries series(String side) {
			List<Double> measured = this.values.get(side);
			if (measured == null) {
				throw new IllegalArgumentException("No side " + side);
			}
			return new SideSeries(side, measured);
		}

		/**
		 * What every side measured, in the given order.
		 * @return one series per side
		 */
		List<SideSeries> allSeries() {
			return this.values.keySet().stream().map(this::series).toList();
		}

	}

	static Outcome run(String benchmark, String runId, List<String> sides, int repeats, int warmups,
			Measurement measurement, Consumer<String> log) {
		Rounds<Double> rounds = rounds(benchmark, runId, sides, repeats, warmups, measurement::measure,
				(value) -> String.format(java.util.Locale.ROOT, "%,.1f", value), log);
		return new Outcome(rounds.values(), rounds.orders());
	}

	/**
	 * Run the sides' rounds, alternating as {@link #run} does, when a round yields more
	 * than one figure.
	 * @param <T> what a round yields
	 * @param benchmark the benchmark's key, for the log
	 * @param runId prefix of the round ids
	 * @param sides the sides' labels, in the order of the report
	 * @param repeats measured repeats
	 * @param warmups discarded repeats before them
	 * @param measurement measures one side once
	 * @param describe what the log shows of a round's figures
	 * @param log the log
	 * @return what the measured repeats yielded
	 */
	static <T> Rounds<T> rounds(String benchmark, String runId, List<String> sides, int repeats, int warmups,
			RoundMeasurement<T> measurement, Function<T, String> describe, Consumer<String> log) {
		Map<String, List<T>> values = new LinkedHashMap<>();
		sides.forEach((side) -> values.put(side, new ArrayList<>()));
		List<String> orders = new ArrayList<>();
		for (int repeat = -warmups; repeat < repeats; repeat++) {
			int rotation = Math.floorMod(repeat, sides.size());
			List<String> order = new ArrayList<>(sides.subList(rotation, sides.size()));
			order.addAll(sides.subList(0, rotation));
			String name = (repeat < 0) ? "warm-up " + (repeat + warmups + 1) + "/" + warmups
					: "repeat " + (repeat + 1) + "/" + repeats;
			for (String side : order) {
				String roundId = runId + "-" + ((repeat < 0) ? "w" + (-repeat) : "r" + repeat) + "-"
						+ sides.indexOf(side);
				T value = measurement.measure(side, roundId);
				log.accept("[" + benchmark + "] " + name + ": " + side + " = " + describe.apply(value));
				if (repeat >= 0) {
					values.get(side).add(value);
				}
			}
			if (repeat >= 0) {
				orders.add(String.join(" → ",
						order.stream().map((side) -> String.valueOf(sides.indexOf(side) + 1)).toList()));
			}
		}
		return new Rounds<>(values, orders);
	}

}
