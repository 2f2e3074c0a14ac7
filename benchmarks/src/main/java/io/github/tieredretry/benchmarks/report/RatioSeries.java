package io.github.tieredretry.benchmarks.report;

import java.util.List;

/**
 * The ratio of two sides measured in the same repeats, and its target.
 *
 * @param label e.g. {@code @RetryableListener ÷ plain @RabbitListener}
 * @param ratios one ratio per repeat
 * @param target the smallest acceptable median ratio, or {@code NaN} for a ratio shown
 * for information
 */
public record RatioSeries(String label, List<Double> ratios, double target) {

	public RatioSeries {
		ratios = List.copyOf(ratios);
	}

	/**
	 * Ratios of two series, repeat by repeat.
	 * @param label the ratio's label
	 * @param numerator the numerator side
	 * @param denominator the denominator side
	 * @param target the smallest acceptable median ratio
	 * @return the ratios
	 */
	public static RatioSeries of(String label, SideSeries numerator, SideSeries denominator, double target) {
		List<Double> ratios = new java.util.ArrayList<>();
		for (int repeat = 0; repeat < numerator.values().size(); repeat++) {
			ratios.add(numerator.values().get(repeat) / denominator.values().get(repeat));
		}
		return new RatioSeries(label, ratios, target);
	}

	/**
	 * Ratios of two ratios, repeat by repeat: how two sides' own ratios compare, e.g. how
	 * much more one side slows down in a storm than another.
	 * @param label the ratio's label
	 * @param numerator the numerator ratio
	 * @param denominator the denominator ratio
	 * @param target the smallest acceptable median ratio
	 * @return the ratios
	 */
	public static RatioSeries of(String label, RatioSeries numerator, RatioSeries denominator, double target) {
		return of(label, new SideSeries(numerator.label(), numerator.ratios()),
				new SideSeries(denominator.label(), denominator.ratios()), target);
	}

	public Summary summary() {
		return Summary.of(this.ratios);
	}

	/**
	 * Whether the median ratio reaches the target: the median of side-by-side repeats is
	 * the headline, the minimum and maximum show the noise.
	 * @return whether the target is met
	 */
	public boolean met() {
		return !hasTarget() || summary().median() >= this.target;
	}

	public boolean hasTarget() {
		return !Double.isNaN(this.target);
	}

}
