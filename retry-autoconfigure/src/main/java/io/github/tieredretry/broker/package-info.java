/**
 * Talking to the broker on real channels: every step of one operation runs on the channel
 * it started on.
 * <p>
 * Internal: public for the auto-configuration, not a stable API.
 */
@NullMarked
package io.github.tieredretry.broker;

import org.jspecify.annotations.NullMarked;
