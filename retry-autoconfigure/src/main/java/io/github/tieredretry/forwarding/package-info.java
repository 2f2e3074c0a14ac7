/**
 * Confirmed, mandatory publishing of failed messages to a delay tier or the parking lot.
 */
@NullMarked
package io.github.tieredretry.forwarding;

import org.jspecify.annotations.NullMarked;
