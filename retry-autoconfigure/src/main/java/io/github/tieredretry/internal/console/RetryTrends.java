package io.github.tieredretry.internal.console;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Function;

import io.github.tieredretry.event.MessageParkedEvent;
import io.github.tieredretry.event.MessageReplayedEvent;
import io.github.tieredretry.event.RetryScheduledEvent;
import org.jspecify.annotations.Nullable;

import org.springframework.context.event.EventListener;

/**
 * How many messages each queue's listener retried, parked and replayed in each of the
 * last 24 hours, counted from the retry events in memory: no external system, and nothing
 * kept across restarts (a restarted application starts from zero). Memory is bounded: 24
 * hourly counters of three kinds per queue of a retryable listener.
 */
public final class RetryTrends {

	/** Hours kept, the current one included. */
	public static final int HOURS = 24;

	private static final long HOUR_MILLIS = Duration.ofHours(1).toMillis();

	private final Clock clock;

	private final Map<String, Counts> byQueue = new ConcurrentHashMap<>();

	public RetryTrends(Clock clock) {
		this.clock = clock;
	}

	@EventListener
	public void onRetryScheduled(RetryScheduledEvent event) {
		count(event.queue(), Kind.RETRIED);
	}

	@EventListener
	public void onMessageParked(MessageParkedEvent event) {
		count(event.queue(), Kind.PARKED);
	}

	@EventListener
	public void onMessageReplayed(MessageReplayedEvent event) {
		count(event.queue(), Kind.REPLAYED);
	}

	private void count(String queue, Kind kind) {
		this.byQueue.computeIfAbsent(queue, (name) -> new Counts()).add(currentHour(), kind);
	}

	private long currentHour() {
		return Math.floorDiv(this.clock.millis(), HOUR_MILLIS);
	}

	/**
	 * The counts of the last {@value #HOURS} hours, oldest first.
	 * @param listenerOfQueue the listener that consumes a queue (its name), or
	 * {@code null} when none is known
	 * @return the trends, one series per queue, sorted by listener and queue
	 */
	public Trends snapshot(Function<String, @Nullable String> listenerOfQueue) {
		long current = currentHour();
		long first = current - HOURS + 1;
		List<Instant> hours = new ArrayList<>(HOURS);
		for (long hour = first; hour <= current; hour++) {
			hours.add(Instant.ofEpochMilli(hour * HOUR_MILLIS));
		}
		Map<String, Series> sorted = new TreeMap<>();
		this.byQueue.forEach((queue, counts) -> {
			String listener = listenerOfQueue.apply(queue);
			Series series = counts.series(listener, queue, first);
			sorted.put(((listener != null) ? listener : "") + '\u0000' + queue, series);
		});
		List<Series> series = List.copyOf(sorted.values());
		return new Trends(hours, series, Series.total(series));
	}

	private static List<Long> list(long[] counts) {
		return Arrays.stream(counts).boxed().toList();
	}

	/** What is counted. */
	private enum Kind {

		RETRIED, PARKED, REPLAYED

	}

	/**
	 * One queue's counts: a ring of hourly slots, each stamped with the hour it counts,
	 * so that a slot left from a day ago counts as empty.
	 */
	private static final class Counts {

		private final long[] stamps = new long[HOURS];

		private final AtomicLongArray counts = new AtomicLongArray(HOURS * Kind.values().length);

		synchronized void add(long hour, Kind kind) {
			int slot = (int) Math.floorMod(hour, HOURS);
			if (this.stamps[slot] != hour) {
				this.stamps[slot] = hour;
				for (Kind each : Kind.values()) {
					this.counts.set(index(slot, each), 0);
				}
			}
			this.counts.incrementAndGet(index(slot, kind));
		}

		synchronized Series series(@Nullable String listener, String queue, long firstHour) {
			long[] retried = new long[HOURS];
			long[] parked = new long[HOURS];
			long[] replayed = new long[HOURS];
			for (int offset = 0; offset < HOURS; offset++) {
				long hour = firstHour + offset;
				int slot = (int) Math.floorMod(hour, HOURS);
				if (this.stamps[slot] == hour) {
					retried[offset] = this.counts.get(index(slot, Kind.RETRIED));
					parked[offset] = this.counts.get(index(slot, Kind.PARKED));
					replayed[offset] = this.counts.get(index(slot, Kind.REPLAYED));
				}
			}
			return new Series(listener, queue, list(retried), list(parked), list(replayed));
		}

		private static int index(int slot, Kind kind) {
			return slot * Kind.values().length + kind.ordinal();
		}

	}

	/**
	 * The counts of the last {@value #HOURS} hours.
	 *
	 * @param hours the start of each hour, oldest first; the last is the current hour
	 * @param series one per queue that had any retry, parked or replayed message since
	 * the application started
	 * @param total the sums over every queue
	 */
	public record Trends(List<Instant> hours, List<Series> series, Series total) {

		public Trends {
			hours = List.copyOf(hours);
			series = List.copyOf(series);
		}

	}

	/**
	 * One queue's counts per hour, aligned with {@link Trends#hours()}.
	 *
	 * @param listener the listener that consumes the queue, or {@code null} (for the
	 * total, or a queue no listener consumes any more)
	 * @param queue the queue, or {@code null} for the total
	 * @param retried retries scheduled
	 * @param parked messages parked
	 * @param replayed parked messages replayed to the queue
	 */
	public record Series(@Nullable String listener, @Nullable String queue, List<Long> retried, List<Long> parked,
			List<Long> replayed) {

		public Series {
			retried = List.copyOf(retried);
			parked = List.copyOf(parked);
			replayed = List.copyOf(replayed);
		}

		static Series total(List<Series> series) {
			long[] retried = new long[HOURS];
			long[] parked = new long[HOURS];
			long[] replayed = new long[HOURS];
			for (Series each : series) {
				for (int hour = 0; hour < HOURS; hour++) {
					retried[hour] += each.retried.get(hour);
					parked[hour] += each.parked.get(hour);
					replayed[hour] += each.replayed.get(hour);
				}
			}
			return new Series(null, null, list(retried), list(parked), list(replayed));
		}

	}

}
