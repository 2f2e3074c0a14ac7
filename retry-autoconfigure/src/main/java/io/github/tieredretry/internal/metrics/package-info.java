/**
 * Retry metrics: Micrometer meters recorded from retry events, and queue depths read from
 * the broker.
 * <p>
 * Internal: users see the endpoint, the page and the meters (docs/observability.md), not
 * these types; they may change in any release.
 */
@NullMarked
package io.github.tieredretry.internal.metrics;

import org.jspecify.annotations.NullMarked;
