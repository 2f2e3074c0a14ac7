package io.github.tieredretry.parkinglot;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * How long, and how many, parked messages are kept ({@code retry.retention.*}): a message
 * parked longer ago than {@code maxAge} is removed, and so are the oldest beyond
 * {@code maxCount}. Either may be absent; with neither, nothing is ever removed.
 *
 * @param maxAge the longest a message stays parked, or {@code null}
 * @param maxCount the most messages kept, or {@code null}
 */
public record RetentionLimits(@Nullable Duration maxAge, @Nullable Long maxCount) {

	/** No limit: nothing is removed. */
	public static final RetentionLimits NONE = new RetentionLimits(null, null);

	public RetentionLimits {
		if (maxAge != null && (maxAge.isNegative() || maxAge.isZero())) {
			throw new IllegalArgumentException("maxAge must be positive but was " + maxAge);
		}
		if (maxCount != null && maxCount < 0) {
			throw new IllegalArgumentException("maxCount must be 0 or more but was " + maxCount);
		}
	}

	/**
	 * Whether any limit is set.
	 * @return whether messages can be removed
	 */
	public boolean limited() {
		return this.maxAge != null || this.maxCount != null;
	}

}
