/**
 * Outage protection: a circuit breaker per retryable listener (Resilience4j, optional)
 * that pauses the listener's consumers while its failures spike, instead of running every
 * message through its retries.
 * <p>
 * Internal: public for the auto-configuration, not a stable API.
 */
@NullMarked
package io.github.tieredretry.breaker;

import org.jspecify.annotations.NullMarked;
