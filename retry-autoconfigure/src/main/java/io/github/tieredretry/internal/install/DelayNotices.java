package io.github.tieredretry.internal.install;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.policy.EffectiveRetryPolicy;
import io.github.tieredretry.policy.Jitter;
import org.jspecify.annotations.Nullable;

/**
 * What the startup log says when the tiers serve a listener's delays only approximately:
 * through several hops, late where the tiers are too far apart, or with its jitter lost
 * where the spread is narrower than the smallest tier.
 */
public final class DelayNotices {

	/** How many retries of a policy the notices describe at most. */
	private static final int MAX_RETRIES_DESCRIBED = 1000;

	/** How many evenly spaced draws of a jittered delay the notice looks at. */
	private static final int JITTER_SAMPLES = 100;

	private final TierLadder tiers;

	DelayNotices(TierLadder tiers) {
		this.tiers = tiers;
	}

	/**
	 * What to say about a listener's delays that the tiers serve only approximately: one
	 * notice naming every retry whose delay goes through several tiers, and one per delay
	 * whose draws the tiers do not spread as its jitter asks. Only for listeners whose
	 * retries run on the tiers (the broker backend serves its delays exactly).
	 * @param listener the listener's name
	 * @param policy its policy
	 * @return the notices, none when the tiers serve every delay as asked
	 */
	List<String> forInexactDelays(String listener, EffectiveRetryPolicy policy) {
		// Retries by delay, in order: a delay that several retries share is named once.
		Map<Duration, List<Long>> retriesByDelay = new LinkedHashMap<>();
		for (long retry = 1; retry <= Math.min(policy.maxRetries(), MAX_RETRIES_DESCRIBED); retry++) {
			retriesByDelay.computeIfAbsent(policy.delayBeforeRetry(retry), (delay) -> new ArrayList<>()).add(retry);
		}
		List<String> notices = new ArrayList<>();
		if (policy.jitter() != 0) {
			retriesByDelay.forEach((delay, retries) -> {
				String notice = jitterNotice(listener, retries, delay, policy.jitter());
				if (notice != null) {
					notices.add(notice);
				}
			});
			return notices;
		}
		List<String> hops = new ArrayList<>();
		List<Duration> tiersToAdd = new ArrayList<>();
		retriesByDelay.forEach((delay, retries) -> {
			String hop = hopsOf(delay);
			if (hop != null) {
				hops.add(retries(retries) + " after " + TierLadder.nameOf(delay)
						+ ((retries.size() == 1) ? " goes" : " go") + " through tiers " + hop);
				tiersToAdd.add(delay);
			}
		});
		if (!hops.isEmpty()) {
			notices.add(listener + ": " + String.join("; ", hops) + "; add "
					+ String.join(", ", tiersToAdd.stream().map(TierLadder::nameOf).toList())
					+ " to retry.tiers for a single hop" + ((tiersToAdd.size() > 1) ? " each." : "."));
		}
		return notices;
	}

	// The tiers a delay goes through when it is not one tier, or null; a delay longer
	// than
	// the largest tier is composed by design.
	private @Nullable String hopsOf(Duration delay) {
		if (delay.compareTo(this.tiers.largest()) > 0 || this.tiers.hasExactTier(delay)) {
			return null;
		}
		List<Duration> hops = this.tiers.hopsFor(delay);
		Duration waited = hops.stream().reduce(Duration.ZERO, Duration::plus);
		String late = (waited.minus(delay).compareTo(this.tiers.smallest()) > 0)
				? ", late by " + TierLadder.nameOf(waited.minus(delay)) + " (the tiers are too far apart to compose it)"
				: "";
		return hops.stream().map(TierLadder::nameOf).toList() + late;
	}

	// "retry 2", "retries 2 and 3", "retries 3-7", "retries 1, 3 and 5".
	static String retries(List<Long> retries) {
		if (retries.size() == 1) {
			return "retry " + retries.get(0);
		}
		long first = retries.get(0);
		long last = retries.get(retries.size() - 1);
		if (retries.size() > 2 && last - first == retries.size() - 1) {
			return "retries " + first + "-" + last;
		}
		List<String> numbers = retries.stream().map(String::valueOf).toList();
		return "retries " + String.join(", ", numbers.subList(0, numbers.size() - 1)) + " and "
				+ numbers.get(numbers.size() - 1);
	}

	// What to say about a jittered delay: nothing while the tiers serve its draws, which
	// are composed of tiers anyway (no tier added makes them single hops); that the
	// spread is lost when it is narrower than the smallest tier, as close as the tiers
	// serve a delay; and that draws are late where the tiers are too far apart to
	// compose them.
	private @Nullable String jitterNotice(String listener, List<Long> retries, Duration delay, double jitter) {
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
			return listener + ": the tiers cannot spread " + retries(retries) + drawn + ": " + returns
					+ ". The tiers serve a delay to within the smallest tier ("
					+ TierLadder.nameOf(this.tiers.smallest()) + "); add a tier shorter than the spread of "
					+ TierLadder.nameOf(spread) + " to retry.tiers, or use a longer delay or more jitter.";
		}
		if (latest.compareTo(this.tiers.smallest()) > 0) {
			return listener + ": " + retries(retries) + drawn + ((retries.size() == 1) ? " is" : " are")
					+ " late by up to " + TierLadder.nameOf(latest)
					+ " for some draws (the tiers are too far apart to compose them); add tiers between "
					+ TierLadder.nameOf(shortest) + " and " + TierLadder.nameOf(longest) + " to retry.tiers.";
		}
		return null;
	}

}
