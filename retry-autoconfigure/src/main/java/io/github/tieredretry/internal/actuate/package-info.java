/**
 * Actuator support: the {@code retry} endpoint and the {@code retry} health indicator.
 * <p>
 * Internal: users see the endpoint, the page and the meters (docs/observability.md), not
 * these types; they may change in any release.
 */
@NullMarked
package io.github.tieredretry.internal.actuate;

import org.jspecify.annotations.NullMarked;
