/**
 * Talking to the broker on real channels: every step of one operation runs on the channel
 * it started on.
 * <p>
 * Internal: not an API; it may change in any release.
 */
@NullMarked
package io.github.tieredretry.internal.broker;

import org.jspecify.annotations.NullMarked;
