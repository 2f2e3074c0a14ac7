/**
 * Operations on the parking lot: peek at parked messages, replay them to their origin
 * queue, purge them ({@link io.github.tieredretry.parkinglot.ParkingLotService}, a bean
 * the starter provides, and the values it takes and returns).
 */
@NullMarked
package io.github.tieredretry.parkinglot;

import org.jspecify.annotations.NullMarked;
