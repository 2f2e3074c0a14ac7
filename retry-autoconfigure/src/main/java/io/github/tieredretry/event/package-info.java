/**
 * Application events published when a retry is scheduled, a message is parked or a message recovers.
 */
@NullMarked
package io.github.tieredretry.event;

import org.jspecify.annotations.NullMarked;
