package io.github.tieredretry.internal.policy;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;

import io.github.tieredretry.policy.EffectiveRetryPolicy;
import io.github.tieredretry.policy.Jitter;
import io.github.tieredretry.policy.ParkedReason;
import io.github.tieredretry.policy.RetryAfter;
import org.assertj.core.groups.Tuple;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RetryDecider}.
 */
class RetryDeciderTests {

	private static final Instant NOW = Instant.parse("2025-06-01T12:00:00Z");

	private static final TierLadder TIERS = TierLadder
		.of(List.of(Duration.ofSeconds(1), Duration.ofSeconds(5), Duration.ofSeconds(30), Duration.ofMinutes(2)));

	private static final TierLadder ONE_AND_FIVE_SECONDS = TierLadder
		.of(List.of(Duration.ofSeconds(1), Duration.ofSeconds(5)));

	@Test
	void firstFailureSchedulesTheFirstRetryAfterTheFirstDelay() {
		RetryDecider decider = decider(TIERS, delays(3, "1s", "5s", "20s"));
		FailureDecision decision = decider.afterFailure(RetryState.FIRST_DELIVERY, true, NOW);
		assertThat(decision).isEqualTo(
				new FailureDecision.Retry(1, Duration.ofSeconds(1), Duration.ofSeconds(1), NOW.plusSeconds(1), NOW));
	}

	@Test
	void laterFailuresScheduleTheNextRetryNumberAndKeepTheFirstFailure() {
		RetryDecider decider = decider(TIERS, delays(3, "1s", "5s", "20s"));
		Instant firstFailure = NOW.minusSeconds(8);
		assertThat(decider.afterFailure(new RetryState(1, firstFailure, NOW.minusSeconds(1)), true, NOW))
			.isEqualTo(new FailureDecision.Retry(2, Duration.ofSeconds(5), Duration.ofSeconds(5), NOW.plusSeconds(5),
					firstFailure));
		assertThat(decider.afterFailure(new RetryState(2, firstFailure, NOW.minusSeconds(1)), true, NOW))
			.isEqualTo(new FailureDecision.Retry(3, Duration.ofSeconds(20), Duration.ofSeconds(5), NOW.plusSeconds(20),
					firstFailure));
	}

	@Test
	void dueTimeCountsFromTheMillisecondOfTheFailureAsHeaderRetryDueHoldsIt() {
		// Header retry-due holds milliseconds: the due time the decision reports is the
		// one the header holds (HeaderChangesTests: a retry is not invoked before it).
		RetryDecider decider = decider(TIERS, delays(3, "1s"));
		Instant failedAt = NOW.plusNanos(599_923_503);
		Instant sameMillisecond = NOW.plusMillis(599);

		assertThat(decider.afterFailure(RetryState.FIRST_DELIVERY, true, failedAt)).isEqualTo(new FailureDecision.Retry(
				1, Duration.ofSeconds(1), Duration.ofSeconds(1), sameMillisecond.plusSeconds(1), sameMillisecond));
		assertThat(
				decider.afterFailure(RetryState.FIRST_DELIVERY, true, failedAt, RetryAfter.of(Duration.ofMillis(800))))
			.isEqualTo(new FailureDecision.Retry(1, Duration.ofMillis(800), Duration.ofSeconds(1),
					sameMillisecond.plusMillis(800), sameMillisecond, true));
		// A delay finer than a millisecond is rounded up: never early.
		assertThat(decider.afterFailure(RetryState.FIRST_DELIVERY, true, failedAt,
				RetryAfter.at(sameMillisecond.plusNanos(800_000_001))))
			.isEqualTo(new FailureDecision.Retry(1, Duration.ofMillis(801), Duration.ofSeconds(1),
					sameMillisecond.plusMillis(801), sameMillisecond, true));
	}

	@Test
	void dueTimeIsNowPlusTheDelayNotNowPlusTheTier() {
		RetryDecider decider = decider(TIERS, delays(1, "3s"));
		FailureDecision.Retry retry = (FailureDecision.Retry) decider.afterFailure(RetryState.FIRST_DELIVERY, true,
				NOW);
		assertThat(retry.tier()).isEqualTo(Duration.ofSeconds(1));
		assertThat(retry.due()).isEqualTo(NOW.plusSeconds(3));
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', textBlock = """
			# the policy: max retries, timeout, delays; the failure: retries so far, first failure
			# (seconds ago, none for a first delivery), retryable; the decision: parked as, first failure
			exhausted after max retries    | 3  |     | 1s  | 3                   | 30 | true  | EXHAUSTED     | 30
			count beyond max retries       | 3  |     | 1s  | 9223372036854775807 |    | true  | EXHAUSTED     | 0
			zero max retries               | 0  |     | 1s  | 0                   |    | true  | EXHAUSTED     | 0
			not retryable, first failure   | 5  |     | 1s  | 0                   |    | false | NOT_RETRYABLE | 0
			not retryable, retries left    | 5  |     | 1s  | 2                   | 3  | false | NOT_RETRYABLE | 3
			due after the timeout          | 10 | 30s | 10s | 2                   | 25 | true  | TIMEOUT       | 25
			timeout before the first delay | 3  | 5s  | 10s | 0                   |    | true  | TIMEOUT       | 0
			exhausted wins over timeout    | 2  | 5s  | 10s | 2                   | 60 | true  | EXHAUSTED     | 60
			""")
	void failureThatIsNotRetriedParksTheMessageWithTheReasonAndItsFirstFailure(String behaviour, int maxRetries,
			@Nullable String timeout, String delay, long retries, @Nullable Long firstFailureSecondsAgo,
			boolean retryable, ParkedReason reason, long parkedFirstFailureSecondsAgo) {
		RetryDecider decider = decider(TIERS,
				withTimeout(maxRetries, (timeout != null) ? duration(timeout) : null, delay));
		RetryState state = (firstFailureSecondsAgo != null)
				? new RetryState(retries, NOW.minusSeconds(firstFailureSecondsAgo), NOW)
				: new RetryState(retries, null, null);
		assertThat(decider.afterFailure(state, retryable, NOW))
			.isEqualTo(new FailureDecision.Park(reason, NOW.minusSeconds(parkedFirstFailureSecondsAgo)));
	}

	@Test
	void retryFallingDueBeforeOrExactlyAtTheTimeoutIsScheduled() {
		RetryDecider decider = decider(TIERS, withTimeout(10, Duration.ofSeconds(30), "10s"));
		Instant firstFailure = NOW.minusSeconds(20);
		assertThat(decider.afterFailure(new RetryState(2, firstFailure, NOW), true, NOW))
			.isInstanceOf(FailureDecision.Retry.class);
		assertThat(decider.afterFailure(new RetryState(1, NOW.minusSeconds(15), NOW), true, NOW))
			.isInstanceOf(FailureDecision.Retry.class);
	}

	@Test
	void firstFailureInTheFutureCountsFromNow() {
		RetryDecider decider = decider(TIERS, withTimeout(5, Duration.ofSeconds(30), "10s"));
		FailureDecision decision = decider.afterFailure(new RetryState(1, NOW.plus(Duration.ofDays(365)), null), true,
				NOW);
		assertThat(decision).isEqualTo(
				new FailureDecision.Retry(2, Duration.ofSeconds(10), Duration.ofSeconds(5), NOW.plusSeconds(10), NOW));
	}

	@Test
	void missingFirstFailureOnARetryCountsFromNow() {
		RetryDecider decider = decider(TIERS, delays(5, "10s"));
		FailureDecision.Retry retry = (FailureDecision.Retry) decider.afterFailure(new RetryState(2, null, null), true,
				NOW);
		assertThat(retry.retryNumber()).isEqualTo(3);
		assertThat(retry.firstFailure()).isEqualTo(NOW);
	}

	@Test
	void exponentialDelaysStartWithTheTierTheirCompositionStartsWith() {
		RetryDecider decider = decider(TIERS, exponential(6, Duration.ofSeconds(1), 2.0, Duration.ofMinutes(1)));
		assertThat(List.of(0L, 1L, 2L, 3L, 4L, 5L))
			.map((retries) -> (FailureDecision.Retry) decider.afterFailure(new RetryState(retries, NOW, null), true,
					NOW))
			.extracting(FailureDecision.Retry::delay, FailureDecision.Retry::tier)
			.containsExactly(tuple(1, 1), tuple(2, 1), tuple(4, 5), tuple(8, 5), tuple(16, 5), tuple(32, 30));
	}

	@Test
	void delayLongerThanTheLargestTierGoesThroughTheLargestTier() {
		RetryDecider decider = decider(ONE_AND_FIVE_SECONDS, delays(3, "12s"));
		assertThat(decider.afterFailure(RetryState.FIRST_DELIVERY, true, NOW)).isEqualTo(
				new FailureDecision.Retry(1, Duration.ofSeconds(12), Duration.ofSeconds(5), NOW.plusSeconds(12), NOW));
	}

	@ParameterizedTest(name = "back {0} ms after the failure: {1}")
	@CsvSource({ "5000, 5s", "7000, 5s", "10000, 1s", "11500, 1s", "11999, 1s" })
	void earlyArrivalHopsThroughTheLargestTierWhileMoreThanItRemainsThenComposesTheRest(long arrivalMillis,
			String tier) {
		RetryDecider decider = decider(ONE_AND_FIVE_SECONDS, delays(3, "12s"));
		RetryState state = new RetryState(1, NOW, NOW.plusSeconds(12));
		assertThat(decider.tierForEarlyArrival(state, NOW.plusMillis(arrivalMillis))).isEqualTo(duration(tier));
	}

	@Test
	void arrivalAtOrAfterTheDueTimeInvokesTheListener() {
		RetryDecider decider = decider(TIERS, delays(3, "12s"));
		RetryState state = new RetryState(1, NOW, NOW.plusSeconds(12));
		assertThat(decider.tierForEarlyArrival(state, NOW.plusSeconds(12))).isNull();
		assertThat(decider.tierForEarlyArrival(state, NOW.plusSeconds(13))).isNull();
		assertThat(decider.tierForEarlyArrival(state, NOW.plus(Duration.ofDays(400)))).isNull();
	}

	@Test
	void messageWithoutDueTimeInvokesTheListener() {
		RetryDecider decider = decider(TIERS, delays(3, "12s"));
		assertThat(decider.tierForEarlyArrival(RetryState.FIRST_DELIVERY, NOW)).isNull();
		assertThat(decider.tierForEarlyArrival(new RetryState(2, NOW, null), NOW)).isNull();
	}

	@Test
	void dueTimeFurtherAheadThanThePolicysLongestDelayIsIgnored() {
		RetryDecider decider = decider(TIERS, delays(3, "1s", "12s"));
		assertThat(decider.tierForEarlyArrival(new RetryState(1, NOW, NOW.plusMillis(12_001)), NOW)).isNull();
		assertThat(decider.tierForEarlyArrival(new RetryState(1, NOW, NOW.plus(Duration.ofDays(3650))), NOW)).isNull();
		assertThat(decider.tierForEarlyArrival(new RetryState(1, NOW, NOW.plusSeconds(12)), NOW))
			.isEqualTo(Duration.ofSeconds(5));
	}

	@Test
	void anyDueTimeAheadIsIgnoredWhenThePolicyAllowsNoRetries() {
		RetryDecider decider = decider(TIERS, delays(0, "10s"));
		assertThat(decider.tierForEarlyArrival(new RetryState(1, NOW, NOW.plusSeconds(1)), NOW)).isNull();
	}

	@Test
	void hopsNeverDeliverBeforeTheDueTimeAndAreLateByAtMostTheSmallestTier() {
		for (long delayMillis = 0; delayMillis <= 60_000; delayMillis += 700) {
			RetryDecider decider = decider(ONE_AND_FIVE_SECONDS,
					new EffectiveRetryPolicy(1, List.of(Duration.ofMillis(delayMillis)), Duration.ofSeconds(1), 2.0,
							Duration.ofHours(1), 0, null, List.of(), List.of()));
			FailureDecision.Retry retry = (FailureDecision.Retry) decider.afterFailure(RetryState.FIRST_DELIVERY, true,
					NOW);
			RetryState state = new RetryState(1, retry.firstFailure(), retry.due());
			// The message leaves its first tier when the tier's TTL expires, then hops
			// until it is due.
			Instant arrival = NOW.plus(retry.tier());
			int hops = 0;
			Duration hop = decider.tierForEarlyArrival(state, arrival);
			while (hop != null) {
				assertThat(hops++).as("hops for a delay of %d ms", delayMillis).isLessThan(100);
				arrival = arrival.plus(hop);
				hop = decider.tierForEarlyArrival(state, arrival);
			}
			assertThat(arrival).as("delivery for a delay of %d ms", delayMillis).isAfterOrEqualTo(retry.due());
			assertThat(Duration.between(retry.due(), arrival)).isLessThanOrEqualTo(ONE_AND_FIVE_SECONDS.smallest());
		}
	}

	@Test
	void twelveSecondDelayWithFiveSecondLargestTierIsTwoPassesThroughItAndTwoThroughTheOneSecondTier() {
		RetryDecider decider = decider(ONE_AND_FIVE_SECONDS, delays(1, "12s"));
		RetryState state = new RetryState(1, NOW, NOW.plusSeconds(12));
		// Sent to 5s at 0s; back at 5s (7s left) -> 5s; at 10s (2s left) -> 1s; at 11s ->
		// 1s; at 12s -> listener.
		assertThat(decider.tierForEarlyArrival(state, NOW.plusSeconds(5))).isEqualTo(Duration.ofSeconds(5));
		assertThat(decider.tierForEarlyArrival(state, NOW.plusSeconds(10))).isEqualTo(Duration.ofSeconds(1));
		assertThat(decider.tierForEarlyArrival(state, NOW.plusSeconds(11))).isEqualTo(Duration.ofSeconds(1));
		assertThat(decider.tierForEarlyArrival(state, NOW.plusSeconds(12))).isNull();
	}

	@Test
	void jitteredRetryCarriesTheDrawnDelayAndFallsDueAfterIt() {
		EffectiveRetryPolicy policy = withJitter(0.5, "4s");
		RetryDecider decider = new RetryDecider(TIERS, policy, new SplittableRandom(42));
		Duration expected = Jitter.draw(Duration.ofSeconds(4), 0.5, new SplittableRandom(42));
		assertThat(expected).isNotEqualTo(Duration.ofSeconds(4));
		FailureDecision.Retry retry = (FailureDecision.Retry) decider.afterFailure(RetryState.FIRST_DELIVERY, true,
				NOW);
		assertThat(retry.delay()).isEqualTo(expected);
		assertThat(retry.due()).isEqualTo(NOW.plus(expected));
		assertThat(retry.tier()).isEqualTo(TIERS.tierFor(expected));
	}

	@Test
	void jitteredRetriesSpreadOverTheRangeAndAreServedNeverEarlyAndLateByAtMostTheSmallestTier() {
		TierLadder tiers = TierLadder.of(List.of(Duration.ofSeconds(1)));
		RetryDecider decider = new RetryDecider(tiers, withJitter(0.5, "4s"), new SplittableRandom(500));
		Set<Long> servedSeconds = new TreeSet<>();
		for (int message = 0; message < 500; message++) {
			FailureDecision.Retry retry = (FailureDecision.Retry) decider.afterFailure(RetryState.FIRST_DELIVERY, true,
					NOW);
			assertThat(retry.delay()).isBetween(Duration.ofSeconds(2), Duration.ofSeconds(6));
			Instant arrival = arrival(decider, retry);
			assertThat(arrival).isAfterOrEqualTo(retry.due());
			assertThat(Duration.between(retry.due(), arrival)).isLessThanOrEqualTo(tiers.smallest());
			servedSeconds.add(Duration.between(NOW, arrival).toSeconds());
		}
		// 1 s tiers serve 2 s to 6 s in whole seconds (2 s only for a draw of exactly
		// 2000 ms): four or five waves, not one.
		assertThat(servedSeconds).contains(3L, 4L, 5L, 6L).isSubsetOf(2L, 3L, 4L, 5L, 6L);
	}

	@Test
	void jitteredExponentialDelaysSpreadAroundEachDelayIncludingTheCappedOnes() {
		EffectiveRetryPolicy policy = new EffectiveRetryPolicy(6, List.of(), Duration.ofSeconds(1), 2.0,
				Duration.ofSeconds(8), 0, null, List.of(), List.of(), 0.2);
		RetryDecider decider = new RetryDecider(TIERS, policy, new SplittableRandom(1));
		for (long retries = 0; retries < 6; retries++) {
			Duration nominal = policy.delayBeforeRetry(retries + 1);
			List<Duration> drawn = new ArrayList<>();
			for (int draw = 0; draw < 2000; draw++) {
				drawn.add(((FailureDecision.Retry) decider.afterFailure(new RetryState(retries, NOW, null), true, NOW))
					.delay());
			}
			// Both sides of the delay, also for the first and for the capped ones.
			assertThat(drawn).allSatisfy((delay) -> assertThat(delay).isBetween(Jitter.shortest(nominal, 0.2),
					Jitter.longest(nominal, 0.2)));
			assertThat(drawn).anySatisfy((delay) -> assertThat(delay).isLessThan(nominal.multipliedBy(9).dividedBy(10)))
				.anySatisfy((delay) -> assertThat(delay).isGreaterThan(nominal.multipliedBy(11).dividedBy(10)));
		}
	}

	@Test
	void withoutJitterTheDecisionNeverDraws() {
		RetryDecider decider = new RetryDecider(TIERS, delays(3, "4s"), () -> {
			throw new AssertionError("drew without jitter");
		});
		assertThat(((FailureDecision.Retry) decider.afterFailure(RetryState.FIRST_DELIVERY, true, NOW)).delay())
			.isEqualTo(Duration.ofSeconds(4));
	}

	@Test
	void jitterNeverParksARetryThePolicyWouldScheduleBeforeTheTimeout() {
		// 20 s after the first failure, a 10 s delay falls due exactly at the 30 s
		// timeout; drawn longer, it is cut to the timeout.
		EffectiveRetryPolicy policy = new EffectiveRetryPolicy(10, List.of(Duration.ofSeconds(10)),
				Duration.ofSeconds(1), 2.0, Duration.ofHours(1), 0, Duration.ofSeconds(30), List.of(), List.of(), 0.5);
		RetryDecider decider = new RetryDecider(TIERS, policy, new SplittableRandom(3));
		Instant firstFailure = NOW.minusSeconds(20);
		for (int draw = 0; draw < 200; draw++) {
			FailureDecision decision = decider.afterFailure(new RetryState(2, firstFailure, NOW), true, NOW);
			assertThat(decision).isInstanceOfSatisfying(FailureDecision.Retry.class,
					(retry) -> assertThat(retry.due()).isBeforeOrEqualTo(firstFailure.plusSeconds(30))
						.isAfterOrEqualTo(NOW.plusSeconds(5)));
		}
		// A policy delay past the timeout parks, whatever a draw would have said.
		assertThat(decider.afterFailure(new RetryState(2, NOW.minusSeconds(21), NOW), true, NOW))
			.isEqualTo(new FailureDecision.Park(ParkedReason.TIMEOUT, NOW.minusSeconds(21)));
	}

	@Test
	void dueTimeOfALongDrawBeyondThePolicysLongestDelayIsStillTrusted() {
		RetryDecider decider = decider(TIERS, withJitter(0.5, "1s", "12s"));
		assertThat(decider.tierForEarlyArrival(new RetryState(1, NOW, NOW.plusSeconds(18)), NOW))
			.isEqualTo(Duration.ofSeconds(5));
		assertThat(decider.tierForEarlyArrival(new RetryState(1, NOW, NOW.plusMillis(18_001)), NOW)).isNull();
	}

	@Test
	void aDelayTheFailureChoosesReplacesThePolicysForThatRetryWhichStillCounts() {
		RetryDecider decider = decider(TIERS, delays(3, "1s", "5s", "60s"));
		FailureDecision decision = decider.afterFailure(new RetryState(1, NOW.minusSeconds(3), null), true, NOW,
				RetryAfter.of(Duration.ofSeconds(42)));
		assertThat(decision).isEqualTo(new FailureDecision.Retry(2, Duration.ofSeconds(42), Duration.ofSeconds(30),
				NOW.plusSeconds(42), NOW.minusSeconds(3), true));
		// Arrives after its first tier, hops, and reaches the listener when due, never
		// earlier.
		assertThat(arrival(decider, (FailureDecision.Retry) decision)).isAfterOrEqualTo(NOW.plusSeconds(42))
			.isBefore(NOW.plusSeconds(43));
		// The next failure is the policy's again.
		assertThat(decider.afterFailure(new RetryState(2, NOW.minusSeconds(3), null), true, NOW))
			.isEqualTo(new FailureDecision.Retry(3, Duration.ofSeconds(60), Duration.ofSeconds(30), NOW.plusSeconds(60),
					NOW.minusSeconds(3)));
		// It is still a retry: none left, parked.
		assertThat(decider.afterFailure(new RetryState(3, NOW.minusSeconds(3), null), true, NOW,
				RetryAfter.of(Duration.ofSeconds(1))))
			.isEqualTo(new FailureDecision.Park(ParkedReason.EXHAUSTED, NOW.minusSeconds(3)));
		// Not retryable stays not retryable.
		assertThat(decider.afterFailure(RetryState.FIRST_DELIVERY, false, NOW, RetryAfter.of(Duration.ofSeconds(1))))
			.isEqualTo(new FailureDecision.Park(ParkedReason.NOT_RETRYABLE, NOW));
	}

	@Test
	void aTimeInThePastRetriesThroughTheSmallestTierAndOneAheadWaitsUntilThen() {
		RetryDecider decider = decider(TIERS, delays(3, "10s"));
		FailureDecision.Retry past = (FailureDecision.Retry) decider.afterFailure(RetryState.FIRST_DELIVERY, true, NOW,
				RetryAfter.at(NOW.minusSeconds(5)));
		assertThat(past.delay()).isZero();
		assertThat(past.tier()).isEqualTo(Duration.ofSeconds(1));
		assertThat(past.due()).isEqualTo(NOW);
		FailureDecision.Retry ahead = (FailureDecision.Retry) decider.afterFailure(RetryState.FIRST_DELIVERY, true, NOW,
				RetryAfter.at(NOW.plusMillis(7_250)));
		assertThat(ahead.delay()).isEqualTo(Duration.ofMillis(7_250));
		assertThat(ahead.due()).isEqualTo(NOW.plusMillis(7_250));
	}

	@Test
	void aChosenDelayIsCutToThePolicysLongestWaitWhichForAnExponentialPolicyIsItsMaxInterval() {
		RetryDecider listed = decider(TIERS, delays(3, "1s", "5s", "20s"));
		assertThat(listed.longestWait()).isEqualTo(Duration.ofSeconds(20));
		assertThat(((FailureDecision.Retry) listed.afterFailure(RetryState.FIRST_DELIVERY, true, NOW,
				RetryAfter.of(Duration.ofHours(1))))
			.delay()).isEqualTo(Duration.ofSeconds(20));
		RetryDecider exponential = decider(TIERS, exponential(3, Duration.ofSeconds(1), 2.0, Duration.ofSeconds(90)));
		assertThat(exponential.longestWait()).isEqualTo(Duration.ofSeconds(90));
		FailureDecision.Retry cut = (FailureDecision.Retry) exponential.afterFailure(RetryState.FIRST_DELIVERY, true,
				NOW, RetryAfter.of(Duration.ofMinutes(5)));
		assertThat(cut.delay()).isEqualTo(Duration.ofSeconds(90));
		// Its due time, beyond the policy's own longest delay (4 s), is trusted on
		// arrival.
		assertThat(exponential.tierForEarlyArrival(new RetryState(1, NOW, cut.due()), NOW.plusSeconds(30)))
			.isEqualTo(Duration.ofSeconds(30));
		assertThat(exponential.tierForEarlyArrival(new RetryState(1, NOW, NOW.plusSeconds(91)), NOW)).isNull();
	}

	@Test
	void aChosenDelayPastTheTimeoutParksTheMessageAsTimedOut() {
		RetryDecider decider = decider(TIERS, withTimeout(5, Duration.ofSeconds(30), "1s", "20s"));
		Instant firstFailure = NOW.minusSeconds(20);
		assertThat(decider.afterFailure(new RetryState(1, firstFailure, null), true, NOW,
				RetryAfter.of(Duration.ofSeconds(11))))
			.isEqualTo(new FailureDecision.Park(ParkedReason.TIMEOUT, firstFailure));
		assertThat(decider.afterFailure(new RetryState(1, firstFailure, null), true, NOW,
				RetryAfter.of(Duration.ofSeconds(10))))
			.isInstanceOf(FailureDecision.Retry.class);
	}

	@Test
	void jitterAppliesToAChosenDelayOnlyWhenAsked() {
		EffectiveRetryPolicy policy = withJitter(0.5, "10s", "10s");
		RetryDecider decider = new RetryDecider(TIERS, policy, new SplittableRandom(7));
		Set<Duration> exact = new TreeSet<>();
		Set<Duration> jittered = new TreeSet<>();
		for (int draw = 0; draw < 50; draw++) {
			exact.add(((FailureDecision.Retry) decider.afterFailure(RetryState.FIRST_DELIVERY, true, NOW,
					RetryAfter.of(Duration.ofSeconds(8))))
				.delay());
			jittered.add(((FailureDecision.Retry) decider.afterFailure(RetryState.FIRST_DELIVERY, true, NOW,
					RetryAfter.of(Duration.ofSeconds(8)).withJitter()))
				.delay());
		}
		assertThat(exact).containsExactly(Duration.ofSeconds(8));
		assertThat(jittered).hasSizeGreaterThan(10)
			.allSatisfy((delay) -> assertThat(delay).isBetween(Duration.ofSeconds(4), Duration.ofSeconds(12)));
	}

	// When a retry reaches the listener: its first tier, then hops until it is due.
	private static Instant arrival(RetryDecider decider, FailureDecision.Retry retry) {
		RetryState state = new RetryState(retry.retryNumber(), retry.firstFailure(), retry.due());
		Instant arrival = NOW.plus(retry.tier());
		Duration hop = decider.tierForEarlyArrival(state, arrival);
		while (hop != null) {
			arrival = arrival.plus(hop);
			hop = decider.tierForEarlyArrival(state, arrival);
		}
		return arrival;
	}

	private static EffectiveRetryPolicy withJitter(double jitter, String... delays) {
		List<Duration> durations = Arrays.stream(delays).map(RetryDeciderTests::duration).toList();
		return new EffectiveRetryPolicy(durations.size(), durations, Duration.ofSeconds(1), 2.0, Duration.ofHours(1), 0,
				null, List.of(), List.of(), jitter);
	}

	private static Tuple tuple(long delaySeconds, long tierSeconds) {
		return Tuple.tuple(Duration.ofSeconds(delaySeconds), Duration.ofSeconds(tierSeconds));
	}

	private static RetryDecider decider(TierLadder tiers, EffectiveRetryPolicy policy) {
		return new RetryDecider(tiers, policy);
	}

	private static EffectiveRetryPolicy delays(int maxRetries, String... delays) {
		return withTimeout(maxRetries, null, delays);
	}

	private static EffectiveRetryPolicy withTimeout(int maxRetries, @Nullable Duration timeout, String... delays) {
		List<Duration> durations = Arrays.stream(delays).map(RetryDeciderTests::duration).toList();
		return new EffectiveRetryPolicy(maxRetries, durations, Duration.ofSeconds(1), 2.0, Duration.ofHours(1), 0,
				timeout, List.of(), List.of());
	}

	private static Duration duration(String text) {
		return Duration.parse("PT" + text.toUpperCase(Locale.ROOT));
	}

	private static EffectiveRetryPolicy exponential(int maxRetries, Duration initial, double multiplier, Duration max) {
		return new EffectiveRetryPolicy(maxRetries, List.of(), initial, multiplier, max, 0, null, List.of(), List.of());
	}

}
