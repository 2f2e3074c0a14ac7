package io.github.tieredretry.internal.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link TierLadder}.
 */
class TierLadderTests {

	private final TierLadder ladder = TierLadder
		.of(List.of(Duration.ofSeconds(1), Duration.ofSeconds(5), Duration.ofSeconds(30), Duration.ofMinutes(2)));

	@Test
	void tierNamesUseTheLargestWholeUnit() {
		assertThat(TierLadder.nameOf(Duration.ofSeconds(10))).isEqualTo("10s");
		assertThat(TierLadder.nameOf(Duration.ofMinutes(2))).isEqualTo("2m");
		assertThat(TierLadder.nameOf(Duration.ofMillis(1500))).isEqualTo("1500ms");
		assertThat(TierLadder.nameOf(Duration.ofHours(1))).isEqualTo("1h");
		assertThat(TierLadder.nameOf(Duration.ofDays(1))).isEqualTo("1d");
		assertThat(TierLadder.nameOf(Duration.ofSeconds(90))).isEqualTo("90s");
		assertThat(TierLadder.nameOf(Duration.ofMinutes(90))).isEqualTo("90m");
		assertThat(TierLadder.nameOf(Duration.ofHours(36))).isEqualTo("36h");
		assertThat(TierLadder.nameOf(Duration.ofMillis(250))).isEqualTo("250ms");
	}

	@Test
	void equalDurationsWrittenDifferentlyGetTheSameName() {
		assertThat(TierLadder.nameOf(Duration.ofSeconds(60))).isEqualTo(TierLadder.nameOf(Duration.ofMinutes(1)))
			.isEqualTo("1m");
		assertThat(TierLadder.nameOf(Duration.ofHours(24))).isEqualTo(TierLadder.nameOf(Duration.ofDays(1)))
			.isEqualTo("1d");
		assertThat(TierLadder.nameOf(Duration.ofMillis(120_000))).isEqualTo("2m");
	}

	@Test
	void delayIsServedInOneHopByATierThatOvershootsByNoMoreThanTheSmallestTier() {
		assertThat(this.ladder.tierFor(Duration.ofMillis(1))).isEqualTo(Duration.ofSeconds(1));
		assertThat(this.ladder.tierFor(Duration.ofSeconds(1))).isEqualTo(Duration.ofSeconds(1));
		assertThat(this.ladder.tierFor(Duration.ofMillis(4001))).isEqualTo(Duration.ofSeconds(5));
		assertThat(this.ladder.tierFor(Duration.ofSeconds(5))).isEqualTo(Duration.ofSeconds(5));
		assertThat(this.ladder.tierFor(Duration.ofSeconds(119))).isEqualTo(Duration.ofMinutes(2));
		assertThat(this.ladder.tierFor(Duration.ofMinutes(2))).isEqualTo(Duration.ofMinutes(2));
	}

	@Test
	void delayThatNoTierServesWithinTheSmallestTierStartsWithTheLargestTierThatDoesNotOvershoot() {
		assertThat(this.ladder.tierFor(Duration.ofMillis(1001))).isEqualTo(Duration.ofSeconds(1));
		assertThat(this.ladder.tierFor(Duration.ofSeconds(6))).isEqualTo(Duration.ofSeconds(5));
		assertThat(this.ladder.tierFor(Duration.ofSeconds(100))).isEqualTo(Duration.ofSeconds(30));
	}

	@Test
	void longDelayIsComposedOfTiersAndNotRoundedUpToTwiceTheLargestTier() {
		TierLadder defaults = TierLadder.of(List.of(Duration.ofSeconds(1), Duration.ofSeconds(5),
				Duration.ofSeconds(30), Duration.ofMinutes(2), Duration.ofMinutes(10), Duration.ofHours(1)));
		assertThat(defaults.hopsFor(Duration.ofMinutes(90))).containsExactly(Duration.ofHours(1),
				Duration.ofMinutes(10), Duration.ofMinutes(10), Duration.ofMinutes(10));
		assertThat(defaults.hopsFor(Duration.ofSeconds(10))).containsExactly(Duration.ofSeconds(5),
				Duration.ofSeconds(5));
	}

	@Test
	void composedDelayIsNeverShortAndLateByAtMostTheSmallestTierWithFewHops() {
		TierLadder defaults = TierLadder.of(List.of(Duration.ofSeconds(1), Duration.ofSeconds(5),
				Duration.ofSeconds(30), Duration.ofMinutes(2), Duration.ofMinutes(10), Duration.ofHours(1)));
		int mostHopsBelowTheLargest = 0;
		for (long millis = 0; millis <= Duration.ofHours(3).toMillis(); millis += 997) {
			Duration delay = Duration.ofMillis(millis);
			List<Duration> hops = defaults.hopsFor(delay);
			Duration waited = hops.stream().reduce(Duration.ZERO, Duration::plus);
			assertThat(waited).as("wait for %s", delay).isGreaterThanOrEqualTo(delay);
			assertThat(waited.minus(delay)).as("lateness for %s", delay).isLessThanOrEqualTo(defaults.smallest());
			long hopsBelowTheLargest = hops.stream().filter((hop) -> !hop.equals(defaults.largest())).count();
			mostHopsBelowTheLargest = (int) Math.max(mostHopsBelowTheLargest, hopsBelowTheLargest);
		}
		assertThat(mostHopsBelowTheLargest).isLessThanOrEqualTo(TierLadder.MAX_COMPOSED_HOPS);
	}

	@Test
	void tiersTooFarApartToComposeADelayRoundItUpInsteadOfHoppingThousandsOfTimes() {
		TierLadder farApart = TierLadder.of(List.of(Duration.ofSeconds(1), Duration.ofHours(1)));
		assertThat(farApart.hopsFor(Duration.ofMinutes(59))).containsExactly(Duration.ofHours(1));
		assertThat(farApart.hopsFor(Duration.ofSeconds(20))).hasSize(20);
	}

	@Test
	void servedWaitIsTheSumOfTheHopsAlsoFarBeyondTheLargestTier() {
		TierLadder ladder = TierLadder
			.of(List.of(Duration.ofMillis(250), Duration.ofSeconds(1), Duration.ofSeconds(5)));
		List<Duration> waits = new ArrayList<>(List.of(Duration.ZERO, Duration.ofMillis(1), Duration.ofSeconds(5),
				Duration.ofMillis(5001), Duration.ofSeconds(10), Duration.ofMillis(10_001), Duration.ofMillis(37_777)));
		for (long millis = 1; millis <= 30_000; millis += 37) {
			waits.add(Duration.ofMillis(millis));
		}
		for (Duration wait : waits) {
			assertThat(ladder.servedWait(wait)).as("wait %s", wait)
				.isEqualTo(ladder.hopsFor(wait).stream().reduce(Duration.ZERO, Duration::plus));
		}
		// A year through 1h tiers: 8,760 hops, counted rather than listed.
		TierLadder defaults = TierLadder.of(List.of(Duration.ofSeconds(1), Duration.ofSeconds(5),
				Duration.ofSeconds(30), Duration.ofMinutes(2), Duration.ofMinutes(10), Duration.ofHours(1)));
		assertThat(defaults.servedWait(Duration.ofDays(365))).isEqualTo(Duration.ofDays(365));
		assertThat(defaults.servedWait(Duration.ofDays(365).plusMillis(1500))).isEqualTo(
				defaults.hopsFor(Duration.ofDays(365).plusMillis(1500)).stream().reduce(Duration.ZERO, Duration::plus));
	}

	@Test
	void zeroDelayIsServedByTheSmallestTier() {
		assertThat(this.ladder.tierFor(Duration.ZERO)).isEqualTo(Duration.ofSeconds(1));
	}

	@Test
	void delayLongerThanEveryTierIsServedByTheLargestTier() {
		assertThat(this.ladder.tierFor(Duration.ofMillis(120_001))).isEqualTo(Duration.ofMinutes(2));
		assertThat(this.ladder.tierFor(Duration.ofHours(10))).isEqualTo(Duration.ofMinutes(2));
	}

	@Test
	void exactTiersAreRecognised() {
		assertThat(this.ladder.hasExactTier(Duration.ofSeconds(30))).isTrue();
		assertThat(this.ladder.hasExactTier(Duration.ofMillis(30_000))).isTrue();
		assertThat(this.ladder.hasExactTier(Duration.ofSeconds(31))).isFalse();
	}

	@Test
	void smallestAndLargestAreTheEndsOfTheLadder() {
		assertThat(this.ladder.smallest()).isEqualTo(Duration.ofSeconds(1));
		assertThat(this.ladder.largest()).isEqualTo(Duration.ofMinutes(2));
		assertThat(this.ladder).hasToString("[1s, 5s, 30s, 2m]");
	}

	@Test
	void ladderDoesNotChangeWhenTheListItWasCreatedFromChanges() {
		List<Duration> tiers = new ArrayList<>(List.of(Duration.ofSeconds(1), Duration.ofSeconds(2)));
		TierLadder created = TierLadder.of(tiers);
		tiers.add(Duration.ofSeconds(3));
		assertThat(created.tiers()).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(2));
	}

	@Test
	void usableTiersHaveNoProblem() {
		assertThat(TierLadder.problemWith(List.of(Duration.ofMillis(1500), Duration.ofSeconds(5)))).isNull();
		assertThat(TierLadder.problemWith(List.of(Duration.ofMillis(1)))).isNull();
		assertThat(TierLadder.problemWith(List.of(Duration.ofMillis(TierLadder.MAX_TTL_MILLIS)))).isNull();
	}

	@Test
	void emptyTiersAreAProblem() {
		assertThat(TierLadder.problemWith(List.of())).isEqualTo("at least one tier is required");
		assertThatIllegalArgumentException().isThrownBy(() -> TierLadder.of(List.of()))
			.withMessage("at least one tier is required");
	}

	@Test
	void unsortedTiersAreAProblemNamingBothTiers() {
		assertThat(TierLadder.problemWith(List.of(Duration.ofSeconds(5), Duration.ofSeconds(1))))
			.contains("strictly ascending")
			.contains("'1s' follows '5s'");
	}

	@Test
	void duplicateTiersAreAProblemEvenWhenWrittenDifferently() {
		assertThat(TierLadder.problemWith(List.of(Duration.ofSeconds(1), Duration.ofSeconds(1))))
			.contains("without duplicates")
			.contains("'1s' follows '1s'");
		assertThat(TierLadder.problemWith(List.of(Duration.ofSeconds(60), Duration.ofMinutes(1))))
			.contains("'1m' follows '1m'");
	}

	@Test
	void zeroTierIsAProblem() {
		assertThat(TierLadder.problemWith(List.of(Duration.ZERO, Duration.ofSeconds(1))))
			.isEqualTo("tier '0s' must be a positive duration");
	}

	@Test
	void negativeTierIsAProblem() {
		assertThat(TierLadder.problemWith(List.of(Duration.ofSeconds(-1)))).contains("must be a positive duration");
	}

	@Test
	void missingTierIsAProblem() {
		assertThat(TierLadder.problemWith(Arrays.asList(Duration.ofSeconds(1), null)))
			.isEqualTo("tier 'null' must be a positive duration");
	}

	@Test
	void subMillisecondTierIsAProblem() {
		assertThat(TierLadder.problemWith(List.of(Duration.ofNanos(1_500_000))))
			.contains("whole number of milliseconds");
		assertThat(TierLadder.problemWith(List.of(Duration.ofNanos(500)))).contains("whole number of milliseconds");
	}

	@Test
	void tierOverRabbitMqsMaximumTtlIsAProblem() {
		assertThat(TierLadder.problemWith(List.of(Duration.ofDays(50))))
			.isEqualTo("tier '50d' is longer than RabbitMQ's maximum message TTL (about 49 days)");
		assertThat(TierLadder.problemWith(List.of(Duration.ofMillis(TierLadder.MAX_TTL_MILLIS + 1))))
			.contains("longer than RabbitMQ's maximum message TTL");
	}

	@Test
	void absurdlyLongTierIsReportedAsAProblemRatherThanThrowing() {
		// Duration.toNanos() and toMillis() overflow for these: the check must still name
		// the problem.
		assertThat(TierLadder.problemWith(List.of(Duration.ofDays(200_000))))
			.contains("longer than RabbitMQ's maximum message TTL");
		assertThat(TierLadder.problemWith(List.of(Duration.ofSeconds(Long.MAX_VALUE))))
			.contains("longer than RabbitMQ's maximum message TTL");
	}

	@Test
	void firstProblemIsReported() {
		assertThat(TierLadder.problemWith(List.of(Duration.ofSeconds(5), Duration.ofSeconds(1), Duration.ZERO)))
			.contains("'1s' follows '5s'");
	}

	@Test
	void creatingALadderFromUnusableTiersFailsWithTheProblem() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> TierLadder.of(List.of(Duration.ofSeconds(2), Duration.ofSeconds(1))))
			.withMessageContaining("'1s' follows '2s'");
	}

}
