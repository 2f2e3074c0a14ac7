package io.github.tieredretry.event;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * The parking lot's retention removed parked messages for good: those parked longer ago
 * than its {@code max-age}, and the oldest beyond its {@code max-count}.
 *
 * @param parkingLot the parking lot
 * @param olderThanMaxAge how many were removed for their age
 * @param beyondMaxCount how many were removed for the count
 * @param maxAge the age limit, or {@code null} when there is none
 * @param maxCount the count limit, or {@code null} when there is none
 */
public record ParkedMessagesExpiredEvent(String parkingLot, long olderThanMaxAge, long beyondMaxCount,
		@Nullable Duration maxAge, @Nullable Long maxCount) {

	/**
	 * How many were removed in all.
	 * @return the number
	 */
	public long removed() {
		return this.olderThanMaxAge + this.beyondMaxCount;
	}

}
