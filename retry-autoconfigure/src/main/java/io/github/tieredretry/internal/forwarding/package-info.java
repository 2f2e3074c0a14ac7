/**
 * Confirmed, mandatory publishing of failed messages to a delay tier or the parking lot.
 * <p>
 * Internal: not an API; it may change in any release.
 */
@NullMarked
package io.github.tieredretry.internal.forwarding;

import org.jspecify.annotations.NullMarked;
