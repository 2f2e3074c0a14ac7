package io.github.tieredretry.benchmarks;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link Alternation}.
 */
class AlternationTests {

	@Test
	void sidesTakeTurnsRunningFirstAndWarmUpsAreDiscarded() {
		List<String> runs = new ArrayList<>();
		Alternation.Outcome outcome = Alternation.run("test", "run", List.of("a", "b", "c"), 3, 1, (side, roundId) -> {
			runs.add(side);
			return runs.size();
		}, (line) -> {
		});

		assertThat(runs).containsExactly("c", "a", "b", "a", "b", "c", "b", "c", "a", "c", "a", "b");
		assertThat(outcome.values().get("a")).containsExactly(4.0, 9.0, 11.0);
		assertThat(outcome.orders()).containsExactly("1 → 2 → 3", "2 → 3 → 1", "3 → 1 → 2");
	}

	@Test
	void everyMeasurementHasARoundIdOfItsOwn() {
		List<String> roundIds = new ArrayList<>();
		Alternation.run("test", "run", List.of("a", "b"), 2, 1, (side, roundId) -> {
			roundIds.add(roundId);
			return 1;
		}, (line) -> {
		});

		assertThat(roundIds).doesNotHaveDuplicates().hasSize(6);
	}

	@Test
	void roundsYieldingSeveralFiguresAlternateTheSameWay() {
		List<String> runs = new ArrayList<>();
		Alternation.Rounds<List<Integer>> rounds = Alternation.rounds("test", "run", List.of("a", "b"), 2, 1,
				(side, roundId) -> {
					runs.add(side);
					return List.of(runs.size(), -runs.size());
				}, Object::toString, (line) -> {
				});

		assertThat(runs).containsExactly("b", "a", "a", "b", "b", "a");
		assertThat(rounds.values().get("a")).containsExactly(List.of(3, -3), List.of(6, -6));
		assertThat(rounds.orders()).containsExactly("1 → 2", "2 → 1");
	}

}
