package io.github.tieredretry.listener;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import io.github.tieredretry.policy.EffectiveRetryPolicy;
import io.github.tieredretry.policy.Jitter;
import io.github.tieredretry.policy.TierLadder;
import org.jspecify.annotations.Nullable;

/**
 * What the startup log says when the tiers serve a listener's delays only approximately:
 * through several hops, late where the tiers are too far apart, or with its jitter lost
 * where the spread is narrower than the smallest tier.
 */
final class DelayNotices {

	/** How many evenly spaced draws of a jittered delay the notice looks at. */
	private static final int JITTER_SAMPLES = 100;

	private final TierLadder tiers;

	DelayNotices(TierLadder tiers) {
		this.tiers = tiers;
	}

	/**
	 * The notice for the first of a listener's first 20 retries whose delay the tiers do
	 * not serve in one hop or do not spread as its jitter asks.
	 * @param listener the listener's name
	 * @param policy its policy
	 * @return the notice, or {@code null} when the tiers serve every delay as asked
	 */
	@Nullable String forInexactDelays(String listener, EffectiveRetryPolicy policy) {
		if (policy.maxRetries() == 0) {
			return null;
		}
		for (long retry = 1; retry <= Math.min(policy.maxRetries(), 20); retry++) {
			Duration delay = policy.delayBeforeRetry(retry);
			String notice = (policy.jitter() != 0) ? jitterNotice(listener, retry, delay, policy.jitter())
					: hopNotice(listener, retry, delay);
			if (notice != null) {
				return notice;
			}
		}
		return null;
	}

	private @Nullable String hopNotice(String listener, long retry, Duration delay) {
		if (delay.compareTo(this.tiers.largest()) > 0 || this.tiers.hasExactTier(delay)) {
			return null;
		}
		List<Duration> hops = this.tiers.hopsFor(delay);
		Duration waited = hops.stream().reduce(Duration.ZERO, Duration::plus);
		String late = (waited.minus(delay).compareTo(this.tiers.smallest()) > 0)
				? ", late by " + TierLadder.nameOf(waited.minus(delay)) + " (the tiers are too far apart to compose it)"
				: "";
		return listener + ": retry " + retry + " after " + TierLadder.nameOf(delay) + " goes through tiers "
				+ hops.stream().map(TierLadder::nameOf).toList() + late + "; add " + TierLadder.nameOf(delay)
				+ " to retry.tiers for a single hop.";
	}

	// What to say about a jittered delay: nothing while the tiers serve its draws, which
	// are composed of tiers anyway (no tier added makes them single hops); that the
	// spread is lost when it is narrower than the smallest tier, as close as the tiers
	// serve a delay; and that draws are late where the tiers are too far apart to
	// compose them.
	private @Nullable String jitterNotice(String listener, long retry, Duration delay, double jitter) {
		if (delay.isZero()) {
			return null;
		}
		Duration shortest = Jitter.shortest(delay, jitter);
		Duration longest = Jitter.longest(delay, jitter);
		Duration spread = longest.minus(shortest);
		// The waits of evenly spaced draws, from the shortest to the longest.
		Set<Duration> waits = new TreeSet<>();
		Duration latest = Duration.ZERO;
		for (int sample = 0; sample <= JITTER_SAMPLES; sample++) {
			Duration draw = shortest.plusMillis(spread.toMillis() * sample / JITTER_SAMPLES);
			Duration served = this.tiers.servedWait(draw);
			waits.add(served);
			latest = (served.minus(draw).compareTo(latest) > 0) ? served.minus(draw) : latest;
		}
		String drawn = " after " + TierLadder.nameOf(delay) + " (jitter " + jitter + ": drawn between "
				+ TierLadder.nameOf(shortest) + " and " + TierLadder.nameOf(longest) + ")";
		if (spread.compareTo(this.tiers.smallest()) < 0) {
			String returns = (waits.size() == 1)
					? "every draw waits " + TierLadder.nameOf(waits.iterator().next()) + ", so messages that fail "
							+ "together are retried together and the jitter has no effect"
					: "draws wait " + String.join(" or ", waits.stream().map(TierLadder::nameOf).toList())
							+ " only, so messages that fail together are retried in " + waits.size() + " waves";
			return listener + ": the tiers cannot spread retry " + retry + drawn + ": " + returns
					+ ". The tiers serve a delay to within the smallest tier ("
					+ TierLadder.nameOf(this.tiers.smallest()) + "); add a tier shorter than the spread of "
					+ TierLadder.nameOf(spread) + " to retry.tiers, or use a longer delay or more jitter.";
		}
		if (latest.compareTo(this.tiers.smallest()) > 0) {
			return listener + ": retry " + retry + drawn + " is late by up to " + TierLadder.nameOf(latest)
					+ " for some draws (the tiers are too far apart to compose them); add tiers between "
					+ TierLadder.nameOf(shortest) + " and " + TierLadder.nameOf(longest) + " to retry.tiers.";
		}
		return null;
	}

}
