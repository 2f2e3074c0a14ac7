/**
 * Confirmed, mandatory publishing of failed messages to a delay tier or the parking lot.
 * <p>
 * Internal: public for the auto-configuration, not a stable API.
 */
@NullMarked
package io.github.tieredretry.forwarding;

import org.jspecify.annotations.NullMarked;
