/**
 * Outage protection: a circuit breaker per retryable listener (Resilience4j, optional)
 * that pauses the listener's consumers while its failures spike, instead of running every
 * message through its retries.
 * <p>
 * Internal: not an API; it may change in any release.
 */
@NullMarked
package io.github.tieredretry.internal.breaker;

import org.jspecify.annotations.NullMarked;
