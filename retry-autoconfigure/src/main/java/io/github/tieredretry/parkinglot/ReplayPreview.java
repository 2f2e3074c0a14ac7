package io.github.tieredretry.parkinglot;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a replay would do (a dry run): nothing was moved.
 *
 * @param wouldMove matching messages that name their origin queue: a replay would publish
 * them to it
 * @param wouldStay matching messages a replay could not move
 * @param stayedByReason how many would stay for each {@link StayReason#value() reason}
 * (only {@code no-origin-queue} is known without publishing)
 * @param scanned parked messages looked at
 * @param partial whether the dry run stopped at its scan limit before the end of the
 * parking lot
 */
public record ReplayPreview(int wouldMove, int wouldStay, Map<String, Integer> stayedByReason, int scanned,
		boolean partial) {

	public ReplayPreview {
		stayedByReason = Collections.unmodifiableMap(new TreeMap<>(stayedByReason));
	}

}
