/**
 * Outage protection: a circuit breaker per retryable listener (Resilience4j, optional) that pauses the
 * listener's consumers while its failures spike, instead of running every message through its retries.
 */
@NullMarked
package io.github.tieredretry.breaker;

import org.jspecify.annotations.NullMarked;
