/**
 * Integration with Spring AMQP listener containers: wraps retryable listeners and
 * captures what was received.
 * <p>
 * Internal, public for the auto-configuration and not a stable API, except two extension
 * types: {@link io.github.tieredretry.listener.RetryFailureClassifier} and the
 * {@link io.github.tieredretry.listener.RetryableListenerInfo} it is given.
 */
@NullMarked
package io.github.tieredretry.listener;

import org.jspecify.annotations.NullMarked;
