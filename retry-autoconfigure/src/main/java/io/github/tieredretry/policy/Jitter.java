package io.github.tieredretry.policy;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;

/**
 * Spreads retries out: the one place where a retry's delay is drawn. With jitter
 * {@code j}, the delay {@code d} of the policy becomes a delay drawn uniformly, in whole
 * milliseconds, from {@code [d × (1 − j), d × (1 + j)]}, for every retry alike: the first
 * one, one whose exponential delay is capped at {@code max-interval}, and one of an
 * explicit {@code delays} list. Jitter 0 returns the delay unchanged, without drawing.
 * <p>
 * Spring Framework 7's {@code ExponentialBackOff#setJitter} is not used, although the
 * policy's exponential delays follow its formula, because its draw has another meaning:
 * its jitter is an absolute number of milliseconds, scaled by
 * {@code interval / initialInterval} in whole numbers (so by 1 for the first two retries
 * with multiplier 1.6); the drawn interval never goes below {@code initialInterval} nor
 * above {@code maxInterval} (the first retry can only be later than its delay, a capped
 * one only earlier); it draws from {@code Math.random()}, which tests cannot seed; and it
 * does not apply to a list of delays. Drawing the policy's delay here keeps one draw, in
 * one place, for every kind of policy.
 */
public final class Jitter {

	/**
	 * A random source for every thread: each consumer thread draws from its own
	 * {@link ThreadLocalRandom}, without contention.
	 */
	public static final RandomGenerator PER_THREAD = () -> ThreadLocalRandom.current().nextLong();

	private static final BigDecimal NANOS_PER_MILLI = BigDecimal.valueOf(1_000_000);

	private Jitter() {
	}

	/**
	 * Draw a delay.
	 * @param delay the policy's delay
	 * @param jitter the jitter factor, from 0 to 1
	 * @param random the random source
	 * @return a delay from {@link #shortest} to {@link #longest}, both included, in whole
	 * milliseconds; {@code delay} itself when {@code jitter} is 0 or the range holds no
	 * other whole millisecond
	 */
	public static Duration draw(Duration delay, double jitter, RandomGenerator random) {
		if (jitter == 0 || delay.isZero()) {
			return delay;
		}
		long shortest = shortestMillis(delay, jitter);
		long longest = longestMillis(delay, jitter);
		if (longest <= shortest) {
			return delay;
		}
		return Duration.ofMillis(random.nextLong(shortest, longest + 1));
	}

	/**
	 * The shortest delay a draw can return: {@code delay × (1 − jitter)}, rounded up to a
	 * whole millisecond.
	 * @param delay the policy's delay
	 * @param jitter the jitter factor, from 0 to 1
	 * @return the shortest delay
	 */
	public static Duration shortest(Duration delay, double jitter) {
		return (jitter == 0 || delay.isZero()) ? delay : Duration.ofMillis(shortestMillis(delay, jitter));
	}

	/**
	 * The longest delay a draw can return: {@code delay × (1 + jitter)}, rounded down to
	 * a whole millisecond.
	 * @param delay the policy's delay
	 * @param jitter the jitter factor, from 0 to 1
	 * @return the longest delay
	 */
	public static Duration longest(Duration delay, double jitter) {
		return (jitter == 0 || delay.isZero()) ? delay : Duration.ofMillis(longestMillis(delay, jitter));
	}

	// Exact decimal arithmetic on the jitter as written (BigDecimal.valueOf: 0.3, not the
	// double's 0.29999999999999998889...): in doubles, 4000 × (1 − 0.2) is
	// 3200.0000000000005, whose ceiling would leave out 3200.
	private static long shortestMillis(Duration delay, double jitter) {
		return scaledMillis(delay, BigDecimal.ONE.subtract(BigDecimal.valueOf(jitter)), RoundingMode.CEILING);
	}

	private static long longestMillis(Duration delay, double jitter) {
		return scaledMillis(delay, BigDecimal.ONE.add(BigDecimal.valueOf(jitter)), RoundingMode.FLOOR);
	}

	private static long scaledMillis(Duration delay, BigDecimal factor, RoundingMode rounding) {
		BigDecimal nanos = BigDecimal.valueOf(delay.getSeconds())
			.scaleByPowerOfTen(9)
			.add(BigDecimal.valueOf(delay.getNano()));
		return nanos.multiply(factor).divide(NANOS_PER_MILLI, 0, rounding).longValueExact();
	}

}
