/**
 * Integration with Spring AMQP listener containers: wraps retryable listeners and captures what was received.
 * <p>
 * Internal: public for the auto-configuration, not a stable API.
 */
@NullMarked
package io.github.tieredretry.listener;

import org.jspecify.annotations.NullMarked;
