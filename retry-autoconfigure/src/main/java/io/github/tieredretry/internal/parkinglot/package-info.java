/**
 * Internal: how the parking lot is read, replayed, purged and kept within its retention
 * limits ({@link io.github.tieredretry.internal.parkinglot.DefaultParkingLotService} and
 * the scans behind it). Not an API: it may change in any release.
 */
@NullMarked
package io.github.tieredretry.internal.parkinglot;

import org.jspecify.annotations.NullMarked;
