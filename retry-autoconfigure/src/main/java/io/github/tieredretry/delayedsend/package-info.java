/**
 * Delayed sends: {@link io.github.tieredretry.delayedsend.DelayedSender} publishes a
 * message to an exchange after a delay, through the retry tiers and the application's
 * scheduled queue.
 */
@NullMarked
package io.github.tieredretry.delayedsend;

import org.jspecify.annotations.NullMarked;
