package io.github.tieredretry.parkinglot;

/**
 * What a purge did, or would do (a dry run).
 *
 * @param parkingLot the parking lot's queue
 * @param dryRun whether nothing was removed
 * @param matched parked messages that match the filter (among those scanned)
 * @param purged messages removed for good (0 in a dry run)
 * @param scanned parked messages looked at ({@code 0} for a purge of everything, which is
 * one broker operation)
 * @param partial whether a dry run stopped at its scan limit before the end of the
 * parking lot
 */
public record PurgeResult(String parkingLot, boolean dryRun, long matched, long purged, int scanned, boolean partial) {
}
