/**
 * Auto-configuration and {@code retry.*} configuration properties.
 */
@NullMarked
package io.github.tieredretry.autoconfigure;

import org.jspecify.annotations.NullMarked;
