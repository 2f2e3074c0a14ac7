package io.github.tieredretry.internal.delayedsend;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

/**
 * How many delayed sends wait in each tier: the hops this application instance published
 * that have not come back yet.
 * <p>
 * The broker cannot say it: a tier queue holds retries and delayed sends alike. So every
 * hop carries who published it and when (header {@code retry-send-hop}); a hop counts
 * from its confirmed publish until it comes back to this instance, or, when another
 * instance of the application took it from the shared scheduled queue, until a minute
 * after it was due back. Hops that were in the tiers when this instance started count
 * from their next hop.
 */
public final class ScheduledCounts {

	/**
	 * How long past its expected return a hop that did not come back here still counts.
	 */
	static final Duration GRACE = Duration.ofMinutes(1);

	private final String instance = UUID.randomUUID().toString();

	private final List<Duration> tiers;

	private final Clock clock;

	/** Per tier (in ms): expected return (epoch s) to the hops expected back then. */
	private final Map<Long, ConcurrentNavigableMap<Long, AtomicLong>> inFlight = new ConcurrentHashMap<>();

	/**
	 * Create counts for tiers.
	 * @param tiers the tiers, ascending
	 * @param clock the clock
	 */
	public ScheduledCounts(List<Duration> tiers, Clock clock) {
		this.tiers = List.copyOf(tiers);
		this.clock = clock;
		tiers.forEach((tier) -> this.inFlight.put(tier.toMillis(), new ConcurrentSkipListMap<>()));
	}

	/**
	 * The delayed sends waiting in each tier.
	 * @return per tier, ascending, the count
	 */
	public Map<Duration, Long> byTier() {
		Map<Duration, Long> counts = new LinkedHashMap<>();
		long stale = this.clock.instant().minus(GRACE).getEpochSecond();
		for (Duration tier : this.tiers) {
			ConcurrentNavigableMap<Long, AtomicLong> hops = this.inFlight.get(tier.toMillis());
			hops.headMap(stale).clear();
			counts.put(tier, hops.values().stream().mapToLong(AtomicLong::get).sum());
		}
		return counts;
	}

	/**
	 * The delayed sends waiting in all tiers.
	 * @return the sum of {@link #byTier()}
	 */
	public long total() {
		return byTier().values().stream().mapToLong(Long::longValue).sum();
	}

	/**
	 * The value of header {@code retry-send-hop} for a hop published now.
	 * @param now the time of the publish
	 * @return {@code <instance>@<epoch ms>}
	 */
	String stamp(Instant now) {
		return this.instance + "@" + now.toEpochMilli();
	}

	/**
	 * A hop is about to be published to a tier.
	 * @param tier the tier
	 * @param at when, as stamped
	 */
	void entered(Duration tier, Instant at) {
		bucket(tier, at).incrementAndGet();
	}

	/**
	 * A hop came back, or its publish failed.
	 * @param tier the tier it went through
	 * @param stamp its header {@code retry-send-hop}
	 */
	void left(Duration tier, @Nullable Object stamp) {
		Instant at = (stamp != null) ? ownStampTime(stamp.toString()) : null;
		if (at == null || !this.inFlight.containsKey(tier.toMillis())) {
			return;
		}
		AtomicLong count = this.inFlight.get(tier.toMillis()).get(expectedBack(tier, at));
		if (count != null) {
			count.updateAndGet((value) -> Math.max(0, value - 1));
		}
	}

	private AtomicLong bucket(Duration tier, Instant at) {
		return this.inFlight.computeIfAbsent(tier.toMillis(), (ignored) -> new ConcurrentSkipListMap<>())
			.computeIfAbsent(expectedBack(tier, at), (ignored) -> new AtomicLong());
	}

	private static long expectedBack(Duration tier, Instant at) {
		return at.plus(tier).getEpochSecond();
	}

	private @Nullable Instant ownStampTime(String stamp) {
		int at = stamp.lastIndexOf('@');
		if (at < 0 || !stamp.substring(0, at).equals(this.instance)) {
			return null;
		}
		try {
			return Instant.ofEpochMilli(Long.parseLong(stamp.substring(at + 1)));
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

}
