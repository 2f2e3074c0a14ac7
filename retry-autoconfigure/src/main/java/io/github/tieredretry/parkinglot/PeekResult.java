package io.github.tieredretry.parkinglot;

import java.util.List;

/**
 * The oldest parked messages, read without removing them.
 *
 * @param parkingLot the parking lot's queue
 * @param depth ready messages in the parking lot when the peek started
 * @param scanned messages looked at to find these
 * @param partial whether the peek stopped at its scan limit before it found {@code limit}
 * matching messages or reached the end of the parking lot
 * @param messages the matching messages, oldest first
 */
public record PeekResult(String parkingLot, long depth, int scanned, boolean partial, List<ParkedMessage> messages) {

	public PeekResult {
		messages = List.copyOf(messages);
	}

}
