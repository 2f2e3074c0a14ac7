package io.github.tieredretry.internal.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.tieredretry.policy.DurationText;
import org.jspecify.annotations.Nullable;

/**
 * The ascending set of delay tiers (fixed-TTL queues) that every retry goes through.
 * <p>
 * A delay is composed of tiers (hops): a message is never redelivered early, and late by
 * at most the smallest tier; a delay longer than the largest tier goes through the
 * largest tier repeatedly.
 */
public final class TierLadder {

	/**
	 * RabbitMQ's upper limit for {@code x-message-ttl}: 2^32 - 1 milliseconds (about 49
	 * days).
	 */
	public static final long MAX_TTL_MILLIS = 4_294_967_295L;

	private static final Duration MAX_TTL = Duration.ofMillis(MAX_TTL_MILLIS);

	/**
	 * The most hops below the largest tier that composing one wait may take; beyond it
	 * the wait rounds up. Tiers at most 6 times apart (like the defaults) never need more
	 * than about 20.
	 */
	static final int MAX_COMPOSED_HOPS = 30;

	/**
	 * Longer durations cannot be expressed in milliseconds ({@link Duration#toMillis()}
	 * overflows).
	 */
	private static final long MAX_NAMED_SECONDS = Long.MAX_VALUE / 1000;

	private final List<Duration> tiers;

	private TierLadder(List<Duration> tiers) {
		this.tiers = List.copyOf(tiers);
	}

	/**
	 * Create a ladder from tier durations.
	 * @param tiers positive, strictly ascending whole-millisecond durations
	 * @return the ladder
	 * @throws IllegalArgumentException naming the offending tier when the list is not
	 * usable
	 */
	public static TierLadder of(List<Duration> tiers) {
		String problem = problemWith(tiers);
		if (problem != null) {
			throw new IllegalArgumentException(problem);
		}
		return new TierLadder(tiers);
	}

	/**
	 * Describe what is wrong with a list of tiers.
	 * @param tiers the candidate tiers
	 * @return a sentence describing the first problem, or {@code null} when the tiers are
	 * usable
	 */
	public static @Nullable String problemWith(List<Duration> tiers) {
		if (tiers.isEmpty()) {
			return "at least one tier is required";
		}
		Duration previous = null;
		for (Duration tier : tiers) {
			if (tier == null || tier.isNegative() || tier.isZero()) {
				return "tier '" + DurationText.of(tier) + "' must be a positive duration";
			}
			// getNano() and compareTo(), not toNanos() or toMillis(): those overflow for
			// very long durations.
			if (tier.getNano() % 1_000_000 != 0) {
				return "tier '" + DurationText.of(tier)
						+ "' must be a whole number of milliseconds (x-message-ttl is in ms)";
			}
			if (tier.compareTo(MAX_TTL) > 0) {
				return "tier '" + ((tier.getSeconds() < MAX_NAMED_SECONDS) ? nameOf(tier) : tier.toString())
						+ "' is longer than RabbitMQ's maximum message TTL (about 49 days)";
			}
			if (previous != null && tier.compareTo(previous) <= 0) {
				return "tiers must be strictly ascending without duplicates, but '" + nameOf(tier) + "' follows '"
						+ nameOf(previous) + "'";
			}
			previous = tier;
		}
		return null;
	}

	/**
	 * The tier for the next hop of a wait, so that the wait is never cut short and ends
	 * late by at most the smallest tier. A wait is composed of tiers: the smallest tier
	 * at least as long as the wait when it overshoots by no more than the smallest tier
	 * (the last hop), otherwise the largest tier that does not overshoot (more hops
	 * follow), and the largest tier while the wait is longer than every tier.
	 * <p>
	 * Where tiers are so far apart that composing the rest would take more than
	 * {@value #MAX_COMPOSED_HOPS} hops below the largest tier, the wait rounds up to the
	 * next tier instead (late by more than the smallest tier; the installer logs a hint
	 * for such policies).
	 * @param wait the time the message still has to wait
	 * @return the tier to publish to
	 */
	public Duration tierFor(Duration wait) {
		Duration up = smallestAtLeast(wait);
		if (up == null) {
			return largest();
		}
		if (up.minus(wait).compareTo(smallest()) <= 0 || composedHops(wait) > MAX_COMPOSED_HOPS) {
			return up;
		}
		return largestAtMost(wait);
	}

	/**
	 * The tiers a wait goes through, in order, as {@link #tierFor(Duration)} composes it.
	 * @param wait the wait
	 * @return the tiers, one per hop
	 */
	public List<Duration> hopsFor(Duration wait) {
		List<Duration> hops = new ArrayList<>();
		Duration remaining = wait;
		do {
			Duration tier = tierFor(remaining);
			hops.add(tier);
			remaining = remaining.minus(tier);
		}
		while (isPositive(remaining));
		return hops;
	}

	/**
	 * How long a wait takes through the tiers: the sum of its hops, at least the wait
	 * and, where the tiers are close enough to compose it, longer by at most the smallest
	 * tier (the broker's latency per hop aside).
	 * @param wait the wait
	 * @return the time the tiers hold it
	 */
	public Duration servedWait(Duration wait) {
		// Beyond the largest tier every hop is the largest until what remains is at most
		// that: counted, not listed (a wait of a year would be 8,760 hops of 1h).
		Duration largest = largest();
		long fullHops = (wait.compareTo(largest) > 0) ? wait.minus(largest).minusNanos(1).dividedBy(largest) + 1 : 0;
		Duration rest = wait.minus(largest.multipliedBy(fullHops));
		return largest.multipliedBy(fullHops).plus(hopsFor(rest).stream().reduce(Duration.ZERO, Duration::plus));
	}

	// Hops below the largest tier when a wait is composed without rounding up, counted up
	// to one past the limit.
	private int composedHops(Duration wait) {
		int hops = 0;
		Duration remaining = wait;
		while (isPositive(remaining) && hops <= MAX_COMPOSED_HOPS) {
			Duration up = smallestAtLeast(remaining);
			Duration tier = (up != null && up.minus(remaining).compareTo(smallest()) <= 0) ? up
					: largestAtMost(remaining);
			remaining = remaining.minus(tier);
			hops++;
		}
		return hops;
	}

	private static boolean isPositive(Duration duration) {
		return !duration.isNegative() && !duration.isZero();
	}

	private @Nullable Duration smallestAtLeast(Duration wait) {
		for (Duration tier : this.tiers) {
			if (tier.compareTo(wait) >= 0) {
				return tier;
			}
		}
		return null;
	}

	// Only called for a wait longer than the smallest tier.
	private Duration largestAtMost(Duration wait) {
		Duration found = smallest();
		for (Duration tier : this.tiers) {
			if (tier.compareTo(wait) <= 0) {
				found = tier;
			}
		}
		return found;
	}

	/**
	 * Whether a wait of the given length is served exactly by one tier (no rounding up,
	 * no hops).
	 * @param wait the wait
	 * @return whether a tier has exactly that length
	 */
	public boolean hasExactTier(Duration wait) {
		return this.tiers.contains(wait);
	}

	public Duration largest() {
		return this.tiers.get(this.tiers.size() - 1);
	}

	public Duration smallest() {
		return this.tiers.get(0);
	}

	public List<Duration> tiers() {
		return this.tiers;
	}

	/**
	 * The short name of a tier, used in queue names and metric tags: {@code 10s},
	 * {@code 2m}, {@code 1500ms}, {@code 1h}, {@code 1d}. Equal durations always get the
	 * same name.
	 * @param tier the tier duration
	 * @return its name
	 */
	public static String nameOf(Duration tier) {
		return DurationText.inLargestUnit(tier);
	}

	@Override
	public String toString() {
		return this.tiers.stream().map(TierLadder::nameOf).toList().toString();
	}

}
