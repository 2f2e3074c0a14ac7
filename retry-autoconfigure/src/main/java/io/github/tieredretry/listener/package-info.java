/**
 * Integration with Spring AMQP listener containers: wraps retryable listeners and captures what was received.
 */
@NullMarked
package io.github.tieredretry.listener;

import org.jspecify.annotations.NullMarked;
