package io.github.tieredretry.parkinglot;

/**
 * What one pass of the retention removed.
 *
 * @param parkingLot the parking lot
 * @param olderThanMaxAge messages removed because they were parked longer ago than the
 * maximum age
 * @param beyondMaxCount the oldest messages removed because the parking lot held more
 * than the maximum count
 * @param scanned how many messages were looked at
 */
public record RetentionResult(String parkingLot, long olderThanMaxAge, long beyondMaxCount, int scanned) {

	/**
	 * How many were removed in all.
	 * @return the number
	 */
	public long removed() {
		return this.olderThanMaxAge + this.beyondMaxCount;
	}

}
