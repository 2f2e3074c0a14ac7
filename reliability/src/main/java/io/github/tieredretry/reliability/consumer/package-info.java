/**
 * The consuming application of the fault run: a small Spring Boot app with one retryable
 * listener that follows each message's fault plan and journals every outcome before the
 * listener returns.
 */
@NullMarked
package io.github.tieredretry.reliability.consumer;

import org.jspecify.annotations.NullMarked;
