/**
 * Actuator support: the {@code retry} endpoint and the {@code retry} health indicator.
 */
@NullMarked
package io.github.tieredretry.actuate;

import org.jspecify.annotations.NullMarked;
