package io.github.tieredretry.parkinglot;

import java.util.List;

/**
 * The parked messages grouped by how they failed, largest group first.
 *
 * @param parkingLot the parking lot's queue
 * @param depth ready messages in the parking lot when the scan started
 * @param scanned messages looked at
 * @param partial whether the scan stopped at its scan limit before the end of the parking
 * lot: the counts are then those of the oldest {@code scanned} messages only
 * @param groups the groups (of the messages that match the filter)
 */
public record FailureGroups(String parkingLot, long depth, int scanned, boolean partial, List<FailureGroup> groups) {

	public FailureGroups {
		groups = List.copyOf(groups);
	}

}
