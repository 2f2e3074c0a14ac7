/**
 * Operations on the parking lot: peek at parked messages, replay them to their origin
 * queue, purge them.
 */
@NullMarked
package io.github.tieredretry.parkinglot;

import org.jspecify.annotations.NullMarked;
