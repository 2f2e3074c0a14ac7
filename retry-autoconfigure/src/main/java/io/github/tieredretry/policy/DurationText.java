package io.github.tieredretry.policy;

import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/**
 * Durations written the way users write them in properties and annotations ({@code 0s},
 * {@code -1s}, {@code 1500ms}, {@code 2h}), not as ISO-8601 ({@code PT0S}), so that a
 * message about a value shows the value the user wrote.
 */
public final class DurationText {

	/**
	 * Longer durations cannot be expressed in milliseconds: they are shown in ISO-8601.
	 */
	private static final long MAX_MILLIS_SECONDS = Long.MAX_VALUE / 1000;

	private DurationText() {
	}

	/**
	 * Format a duration.
	 * @param duration the duration, or {@code null}
	 * @return e.g. {@code 10s}, {@code 0s}, {@code -5s}, {@code 1500ms}; {@code null} as
	 * {@code "null"}
	 */
	public static String of(@Nullable Duration duration) {
		if (duration == null) {
			return "null";
		}
		if (duration.isZero()) {
			return "0s";
		}
		if (duration.isNegative() && duration.getSeconds() > Long.MIN_VALUE) {
			return "-" + of(duration.negated());
		}
		if (duration.isNegative() || duration.getNano() % 1_000_000 != 0
				|| duration.getSeconds() >= MAX_MILLIS_SECONDS) {
			return duration.toString();
		}
		return inLargestUnit(duration);
	}

	/**
	 * Format a duration in whole milliseconds in its largest whole unit, as tier queues
	 * are named.
	 * @param tier the duration
	 * @return e.g. {@code 10s}, {@code 2h}, {@code 1500ms}
	 */
	public static String inLargestUnit(Duration tier) {
		long millis = tier.toMillis();
		if (millis != 0 && millis % 86_400_000L == 0) {
			return (millis / 86_400_000L) + "d";
		}
		if (millis != 0 && millis % 3_600_000L == 0) {
			return (millis / 3_600_000L) + "h";
		}
		if (millis != 0 && millis % 60_000L == 0) {
			return (millis / 60_000L) + "m";
		}
		if (millis != 0 && millis % 1000L == 0) {
			return (millis / 1000L) + "s";
		}
		return millis + "ms";
	}

	/**
	 * Format a list of durations.
	 * @param durations the durations
	 * @return e.g. {@code [10s, 100s, 1h]}
	 */
	public static String of(List<? extends @Nullable Duration> durations) {
		return durations.stream().map(DurationText::of).collect(Collectors.joining(", ", "[", "]"));
	}

}
