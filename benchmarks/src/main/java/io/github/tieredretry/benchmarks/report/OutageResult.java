package io.github.tieredretry.benchmarks.report;

import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * A downstream outage in a steady stream of messages, with and without the listener's
 * circuit breaker: absolute counts and times per side, measured side by side in the same
 * repeats. No ratio: the side with a breaker parks nothing, and each side's time to drain
 * is bounded by one of its settings.
 *
 * @param outage how long the downstream was down, e.g. {@code 60s}
 * @param perSecond the stream's rate, in messages per second
 * @param delays the policy's delays, as tiers, e.g. {@code [1001ms, 5001ms, 10001ms]}
 * @param breaker the breaker's settings, as the report shows them
 * @param sides the sides, in the order of the report
 * @param orders the order the sides ran in, per repeat
 */
public record OutageResult(String outage, int perSecond, List<String> delays, String breaker, List<Side> sides,
		List<String> orders) {

	public OutageResult {
		delays = List.copyOf(delays);
		sides = List.copyOf(sides);
		orders = List.copyOf(orders);
	}

	/**
	 * What one round of a side measured.
	 *
	 * @param published messages published to the listener's queue in the round: before,
	 * during and after the outage, until it was drained
	 * @param processed of which the listener processed (on their first attempt or a
	 * retry)
	 * @param parked of which were parked
	 * @param drainSeconds from the end of the outage until every message published so far
	 * was processed or parked and the queue and tiers were empty
	 */
	public record Round(int published, int processed, int parked, double drainSeconds) {

	}

	/**
	 * One side: its rounds, one per repeat.
	 *
	 * @param label the side's label
	 * @param rounds its rounds, in repeat order
	 */
	public record Side(String label, List<Round> rounds) {

		public Side {
			rounds = List.copyOf(rounds);
		}

		/**
		 * One figure of every round.
		 * @param figure which figure
		 * @return its values, in repeat order
		 */
		public List<Double> values(ToDoubleFunction<Round> figure) {
			return this.rounds.stream().map((round) -> figure.applyAsDouble(round)).toList();
		}

		public Summary parked() {
			return Summary.of(values(Round::parked));
		}

		public Summary processed() {
			return Summary.of(values(Round::processed));
		}

		public Summary published() {
			return Summary.of(values(Round::published));
		}

		public Summary drainSeconds() {
			return Summary.of(values(Round::drainSeconds));
		}

	}

}
