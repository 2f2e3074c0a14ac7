/**
 * Application events published when a retry is scheduled, a message is parked or
 * recovers, a forward fails, or the broker blocks or unblocks forwarding. They are
 * published on the starter's event thread, after the message they describe has been
 * acked, so that a slow event listener never holds up an acknowledgement.
 */
@NullMarked
package io.github.tieredretry.event;

import org.jspecify.annotations.NullMarked;
