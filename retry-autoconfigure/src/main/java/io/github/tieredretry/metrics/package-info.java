/**
 * Retry metrics: Micrometer meters recorded from retry events, and queue depths read from
 * the broker.
 */
@NullMarked
package io.github.tieredretry.metrics;

import org.jspecify.annotations.NullMarked;
