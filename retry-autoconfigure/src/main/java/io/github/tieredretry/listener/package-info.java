/**
 * Integration with Spring AMQP listener containers: wraps retryable listeners and
 * captures what was received.
 * <p>
 * Internal, public for the auto-configuration and not a stable API, except two extension
 * types, {@link io.github.tieredretry.listener.RetryFailureClassifier} and the
 * {@link io.github.tieredretry.listener.RetryableListenerInfo} it is given, and two
 * exceptions: {@link io.github.tieredretry.listener.BatchListenerFailedException}, which
 * a batch listener throws to name its failed messages, and
 * {@link io.github.tieredretry.listener.AsyncAttemptTimeoutException}, the failure of an
 * asynchronous listener's attempt that took too long.
 */
@NullMarked
package io.github.tieredretry.listener;

import org.jspecify.annotations.NullMarked;
