package io.github.tieredretry.policy;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link EffectiveRetryPolicy}.
 */
class EffectiveRetryPolicyTests {

	@Test
	void explicitDelaysAreUsedInOrderAndTheLastOneRepeats() {
		EffectiveRetryPolicy policy = withDelays(6, Duration.ofSeconds(10), Duration.ofSeconds(100),
				Duration.ofHours(1));
		assertThat(policy.delayBeforeRetry(1)).isEqualTo(Duration.ofSeconds(10));
		assertThat(policy.delayBeforeRetry(2)).isEqualTo(Duration.ofSeconds(100));
		assertThat(policy.delayBeforeRetry(3)).isEqualTo(Duration.ofHours(1));
		assertThat(policy.delayBeforeRetry(4)).isEqualTo(Duration.ofHours(1));
		assertThat(policy.delayBeforeRetry(6)).isEqualTo(Duration.ofHours(1));
	}

	@Test
	void singleExplicitDelayIsAFixedDelay() {
		EffectiveRetryPolicy policy = withDelays(3, Duration.ofSeconds(7));
		assertThat(policy.delayBeforeRetry(1)).isEqualTo(Duration.ofSeconds(7));
		assertThat(policy.delayBeforeRetry(3)).isEqualTo(Duration.ofSeconds(7));
	}

	@Test
	void explicitDelaysOverrideTheExponentialSettings() {
		EffectiveRetryPolicy policy = new EffectiveRetryPolicy(3, List.of(Duration.ofSeconds(3)), Duration.ofSeconds(1),
				10.0, Duration.ofHours(1), 0, null, List.of(), List.of());
		assertThat(policy.delayBeforeRetry(2)).isEqualTo(Duration.ofSeconds(3));
	}

	@Test
	void noRetryOnNamesAFailureThroughItsCauseChainWhateverRetryOnSays() {
		EffectiveRetryPolicy policy = new EffectiveRetryPolicy(3, List.of(Duration.ofSeconds(3)), Duration.ofSeconds(1),
				2.0, Duration.ofHours(1), 0, null, List.of(IllegalStateException.class),
				List.of(IllegalArgumentException.class));
		assertThat(policy.isNoRetryOn(new RuntimeException(new IllegalArgumentException("wrapped")))).isTrue();
		assertThat(policy.isNoRetryOn(new UnsupportedOperationException())).isFalse();
		assertThat(policy.isRetryable(new UnsupportedOperationException())).isFalse();
	}

	@Test
	void zeroExplicitDelayIsAllowed() {
		assertThat(withDelays(1, Duration.ZERO).delayBeforeRetry(1)).isEqualTo(Duration.ZERO);
	}

	@Test
	void exponentialDelayGrowsByTheMultiplierUpToTheMaxInterval() {
		EffectiveRetryPolicy policy = exponential(8, Duration.ofSeconds(1), 2.0, Duration.ofSeconds(10));
		assertThat(List.of(1L, 2L, 3L, 4L, 5L, 6L, 8L)).map(policy::delayBeforeRetry)
			.containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(4), Duration.ofSeconds(8),
					Duration.ofSeconds(10), Duration.ofSeconds(10), Duration.ofSeconds(10));
	}

	@Test
	void exponentialDelayIsInitialTimesMultiplierToThePowerOfRetryMinusOneCappedByMaxInterval() {
		assertFollowsFormula(exponential(20, Duration.ofSeconds(1), 1.5, Duration.ofMinutes(10)));
		assertFollowsFormula(exponential(30, Duration.ofMillis(750), 1.3, Duration.ofHours(1)));
		assertFollowsFormula(exponential(12, Duration.ofSeconds(2), 3.0, Duration.ofMinutes(30)));
	}

	@Test
	void exponentialDelayWithASmallMultiplierStillGrows() {
		// Rounding each step down to whole milliseconds would keep 100ms * 1.005 at 100ms
		// forever.
		EffectiveRetryPolicy policy = exponential(500, Duration.ofMillis(100), 1.005, Duration.ofHours(1));
		assertThat(policy.delayBeforeRetry(200)).isEqualTo(Duration.ofMillis((long) (100 * Math.pow(1.005, 199))));
		assertThat(policy.delayBeforeRetry(200)).isGreaterThan(Duration.ofMillis(250));
	}

	@Test
	void multiplierOfOneIsAFixedDelay() {
		EffectiveRetryPolicy policy = exponential(5, Duration.ofSeconds(3), 1.0, Duration.ofHours(1));
		assertThat(policy.delayBeforeRetry(1)).isEqualTo(Duration.ofSeconds(3));
		assertThat(policy.delayBeforeRetry(5)).isEqualTo(Duration.ofSeconds(3));
	}

	@Test
	void initialIntervalLongerThanTheMaxIntervalIsCapped() {
		EffectiveRetryPolicy policy = exponential(3, Duration.ofHours(2), 2.0, Duration.ofHours(1));
		assertThat(policy.delayBeforeRetry(1)).isEqualTo(Duration.ofHours(1));
	}

	@Test
	void retryNumbersStartAtOne() {
		EffectiveRetryPolicy policy = exponential(3, Duration.ofSeconds(1), 2.0, Duration.ofHours(1));
		assertThatIllegalArgumentException().isThrownBy(() -> policy.delayBeforeRetry(0))
			.withMessageContaining("start at 1");
	}

	@ParameterizedTest(name = "initial {0}, multiplier {1}")
	@CsvSource({ "PT2S, 1.0, PT2S", "PT1S, 2.0, PT1H" })
	@Timeout(value = 500, unit = TimeUnit.MILLISECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
	void hugeMaxRetriesWithAFixedOrGrowingExponentialDelayIsComputedInMilliseconds(Duration initial, double multiplier,
			Duration last) {
		EffectiveRetryPolicy policy = exponential(1_000_000_000, initial, multiplier, Duration.ofHours(1));
		assertThat(policy.delayBeforeRetry(1_000_000_000)).isEqualTo(last);
		assertThat(policy.longestDelay()).isEqualTo(last);
	}

	@Test
	@Timeout(value = 500, unit = TimeUnit.MILLISECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
	void hugeMaxRetriesWithATinyMultiplierAndHugeIntervalsIsComputedInMilliseconds() {
		EffectiveRetryPolicy policy = exponential(1_000_000_000, Duration.ofMillis(1_000_000_000_000L), 1.000000000001,
				EffectiveRetryPolicy.MAX_DURATION);
		Duration longest = policy.longestDelay();
		assertThat(longest).isGreaterThan(Duration.ofMillis(1_000_000_000_000L));
	}

	@Test
	void durationsLongerThanAHundredYearsAreRejectedSoThatDueTimesCannotOverflow() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> exponential(3, Duration.ofSeconds(1), 2.0, Duration.ofMillis(Long.MAX_VALUE)))
			.withMessageStartingWith("max-interval ")
			.withMessageContaining("of at most 100 years");
	}

	@Test
	@Timeout(value = 500, unit = TimeUnit.MILLISECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
	void hugeMaxRetriesWithExplicitDelaysIsComputedInMilliseconds() {
		EffectiveRetryPolicy policy = withDelays(Integer.MAX_VALUE, Duration.ofSeconds(1), Duration.ofSeconds(9));
		assertThat(policy.delayBeforeRetry(Integer.MAX_VALUE)).isEqualTo(Duration.ofSeconds(9));
		assertThat(policy.longestDelay()).isEqualTo(Duration.ofSeconds(9));
	}

	@Test
	void longestDelayOfExplicitDelaysOnlyCountsDelaysThatMaxRetriesReaches() {
		List<Duration> delays = List.of(Duration.ofSeconds(10), Duration.ofHours(1), Duration.ofSeconds(5));
		assertThat(withDelays(1, delays.toArray(Duration[]::new)).longestDelay()).isEqualTo(Duration.ofSeconds(10));
		assertThat(withDelays(2, delays.toArray(Duration[]::new)).longestDelay()).isEqualTo(Duration.ofHours(1));
		assertThat(withDelays(9, delays.toArray(Duration[]::new)).longestDelay()).isEqualTo(Duration.ofHours(1));
	}

	@Test
	void longestExponentialDelayIsTheDelayBeforeTheLastRetry() {
		assertThat(exponential(3, Duration.ofSeconds(1), 2.0, Duration.ofHours(1)).longestDelay())
			.isEqualTo(Duration.ofSeconds(4));
		assertThat(exponential(30, Duration.ofSeconds(1), 2.0, Duration.ofMinutes(1)).longestDelay())
			.isEqualTo(Duration.ofMinutes(1));
	}

	@Test
	void longestDelayIncludesTheLongestDrawOfTheJitter() {
		EffectiveRetryPolicy policy = new EffectiveRetryPolicy(2,
				List.of(Duration.ofSeconds(4), Duration.ofSeconds(10)), Duration.ofSeconds(1), 2.0, Duration.ofHours(1),
				0, null, List.of(), List.of(), 0.5);
		assertThat(policy.longestDelay()).isEqualTo(Duration.ofSeconds(15));
		assertThat(policy.delayBeforeRetry(1)).isEqualTo(Duration.ofSeconds(4));
	}

	@Test
	void longestDelayIsZeroWhenNoRetryIsAllowed() {
		assertThat(withDelays(0, Duration.ofHours(1)).longestDelay()).isZero();
		assertThat(exponential(0, Duration.ofSeconds(1), 2.0, Duration.ofHours(1)).longestDelay()).isZero();
	}

	@Test
	void everyExceptionIsRetryableWhenNeitherRetryOnNorNoRetryOnIsSet() {
		assertThat(retryable(List.of(), List.of())).accepts(new IllegalStateException(), new IOException(),
				new StackOverflowError());
	}

	@Test
	void retryOnRetriesOnlyMatchingExceptionsAndTheirSubclasses() {
		assertThat(retryable(List.of(IOException.class), List.of()))
			.accepts(new IOException(), new FileNotFoundException())
			.rejects(new IllegalStateException());
	}

	@Test
	void retryOnMatchesThroughTheCauseChain() {
		assertThat(retryable(List.of(IOException.class), List.of()))
			.accepts(new IllegalStateException(new UncheckedIOException(new IOException())))
			.rejects(new IllegalStateException(new IllegalArgumentException()));
	}

	@Test
	void noRetryOnStopsMatchingExceptionsAndTheirSubclasses() {
		assertThat(retryable(List.of(), List.of(IllegalArgumentException.class)))
			.rejects(new IllegalArgumentException(), new NumberFormatException())
			.accepts(new IllegalStateException());
	}

	@Test
	void noRetryOnMatchesThroughTheCauseChain() {
		assertThat(retryable(List.of(), List.of(IllegalArgumentException.class)))
			.rejects(new RuntimeException(new IllegalStateException(new NumberFormatException())));
	}

	@Test
	void noRetryOnWinsOverRetryOn() {
		Predicate<Throwable> retryable = retryable(List.of(RuntimeException.class),
				List.of(IllegalArgumentException.class));
		assertThat(retryable).accepts(new IllegalStateException()).rejects(new IllegalArgumentException());
		// The outer exception is retryable, a cause is not: not retried.
		assertThat(retryable).rejects(new IllegalStateException(new IllegalArgumentException()), new IOException());
	}

	@Test
	void negativeMaxRetriesIsRejectedNamingTheField() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new EffectiveRetryPolicy(-1, List.of(), Duration.ofSeconds(1), 2.0, Duration.ofHours(1),
					0, null, List.of(), List.of()))
			.withMessage("max-retries -1 is not usable. Use 0 or more retries (retries after the first attempt).");
	}

	@Test
	void negativeImmediateRetriesIsRejectedNamingTheField() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new EffectiveRetryPolicy(1, List.of(), Duration.ofSeconds(1), 2.0, Duration.ofHours(1),
					-2, null, List.of(), List.of()))
			.withMessage("immediate-retries -2 is not usable. Use 0 or more in-place retries.");
	}

	@Test
	void multiplierBelowOneIsRejectedNamingTheField() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> exponential(1, Duration.ofSeconds(1), 0.5, Duration.ofHours(1)))
			.withMessage("multiplier 0.5 is not usable. Use a multiplier of at least 1.0 (1.0 means a fixed delay).");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> exponential(1, Duration.ofSeconds(1), Double.NaN, Duration.ofHours(1)))
			.withMessageStartingWith("multiplier");
	}

	@Test
	void nonPositiveIntervalsAreRejectedNamingTheField() {
		assertThatIllegalArgumentException().isThrownBy(() -> exponential(1, Duration.ZERO, 2.0, Duration.ofHours(1)))
			.withMessageStartingWith("initial-interval 0s is not usable. Use a positive duration");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> exponential(1, Duration.ofSeconds(1), 2.0, Duration.ofSeconds(-1)))
			.withMessageStartingWith("max-interval -1s is not usable. Use a positive duration");
	}

	@Test
	void nonPositiveTimeoutIsRejectedNamingTheField() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new EffectiveRetryPolicy(1, List.of(), Duration.ofSeconds(1), 2.0, Duration.ofHours(1), 0,
					Duration.ZERO, List.of(), List.of()))
			.withMessageStartingWith("timeout 0s is not usable. Use a positive duration");
	}

	@Test
	void negativeDelayIsRejectedNamingTheField() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> withDelays(1, Duration.ofSeconds(1), Duration.ofSeconds(-5)))
			.withMessageStartingWith("delays -5s is not usable. Use delays of zero or more");
	}

	@Test
	void jitterOutsideZeroToOneIsRejectedNamingTheField() {
		for (double jitter : new double[] { -0.1, 1.01, Double.NaN, Double.POSITIVE_INFINITY }) {
			assertThatIllegalArgumentException()
				.isThrownBy(() -> new EffectiveRetryPolicy(1, List.of(), Duration.ofSeconds(1), 2.0,
						Duration.ofHours(1), 0, null, List.of(), List.of(), jitter))
				.withMessage("jitter " + jitter + " is not usable. Use a factor from 0 to 1, such as 0.2 (each "
						+ "retry's delay drawn between 80% and 120% of itself), or 0 for exact delays.");
		}
		assertThat(new EffectiveRetryPolicy(1, List.of(), Duration.ofSeconds(1), 2.0, Duration.ofHours(1), 0, null,
				List.of(), List.of(), 1.0)
			.jitter()).isEqualTo(1.0);
	}

	@Test
	void policyWithoutJitterArgumentHasExactDelays() {
		assertThat(withDelays(1, Duration.ofSeconds(1)).jitter()).isZero();
	}

	@Test
	void policyKeepsItsOwnCopiesOfTheLists() {
		List<Duration> delays = new ArrayList<>(List.of(Duration.ofSeconds(1)));
		List<Class<? extends Throwable>> retryOn = new ArrayList<>(List.of(IOException.class));
		EffectiveRetryPolicy policy = new EffectiveRetryPolicy(1, delays, Duration.ofSeconds(1), 2.0,
				Duration.ofHours(1), 0, null, retryOn, List.of());
		delays.add(Duration.ofHours(1));
		retryOn.add(IllegalStateException.class);
		assertThat(policy.delays()).containsExactly(Duration.ofSeconds(1));
		assertThat(policy.retryOn()).containsExactly(IOException.class);
		assertThat(policy.isRetryable(new IllegalStateException())).isFalse();
	}

	@Test
	void toStringDescribesTheSettings() {
		EffectiveRetryPolicy policy = new EffectiveRetryPolicy(4,
				List.of(Duration.ofSeconds(10), Duration.ofMinutes(2)), Duration.ofSeconds(1), 2.0, Duration.ofHours(1),
				1, Duration.ofHours(2), List.of(IOException.class), List.of(IllegalArgumentException.class));
		assertThat(policy).hasToString("EffectiveRetryPolicy[max-retries=4, delays=[10s, 2m], immediate-retries=1, "
				+ "timeout=2h, retry-on=[java.io.IOException], no-retry-on=[java.lang.IllegalArgumentException]]");
		assertThat(exponential(2, Duration.ofSeconds(1), 2.0, Duration.ofHours(1)).toString())
			.contains("initial-interval=1s, multiplier=2.0, max-interval=1h, immediate-retries=0");
		assertThat(new EffectiveRetryPolicy(2, List.of(Duration.ofSeconds(10)), Duration.ofSeconds(1), 2.0,
				Duration.ofHours(1), 0, null, List.of(), List.of(), 0.2))
			.hasToString("EffectiveRetryPolicy[max-retries=2, delays=[10s], jitter=0.2, immediate-retries=0]");
	}

	private static void assertFollowsFormula(EffectiveRetryPolicy policy) {
		for (long retry = 1; retry <= policy.maxRetries(); retry++) {
			double exact = policy.initialInterval().toMillis() * Math.pow(policy.multiplier(), retry - 1);
			long expected = (long) Math.min(exact, policy.maxInterval().toMillis());
			assertThat(policy.delayBeforeRetry(retry)).as("delay before retry %d of %s", retry, policy)
				.isEqualTo(Duration.ofMillis(expected));
		}
	}

	private static EffectiveRetryPolicy withDelays(int maxRetries, Duration... delays) {
		return new EffectiveRetryPolicy(maxRetries, List.of(delays), Duration.ofSeconds(1), 2.0, Duration.ofHours(1), 0,
				null, List.of(), List.of());
	}

	private static EffectiveRetryPolicy exponential(int maxRetries, Duration initial, double multiplier, Duration max) {
		return new EffectiveRetryPolicy(maxRetries, List.of(), initial, multiplier, max, 0, null, List.of(), List.of());
	}

	/**
	 * Which failures a policy with these retry-on and no-retry-on lists retries.
	 */
	private static Predicate<Throwable> retryable(List<Class<? extends Throwable>> retryOn,
			List<Class<? extends Throwable>> noRetryOn) {
		return new EffectiveRetryPolicy(3, List.of(), Duration.ofSeconds(1), 2.0, Duration.ofHours(1), 0, null, retryOn,
				noRetryOn)::isRetryable;
	}

}
