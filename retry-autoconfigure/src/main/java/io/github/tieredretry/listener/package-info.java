/**
 * Retryable listeners, as the application sees them: the extension points
 * ({@link io.github.tieredretry.listener.RetryFailureClassifier},
 * {@link io.github.tieredretry.listener.RetryAfterResolver}) and what they are given
 * ({@link io.github.tieredretry.listener.RetryableListenerInfo}), the exceptions a
 * listener throws or meets
 * ({@link io.github.tieredretry.listener.BatchListenerFailedException},
 * {@link io.github.tieredretry.listener.AsyncAttemptTimeoutException},
 * {@link io.github.tieredretry.listener.RetryableListenerConfigurationException}), the
 * registry of retryable listeners, their backends and the gates a circuit breaker
 * implements.
 * <p>
 * How it works lives in three internal subpackages, public for one another and the
 * auto-configuration only: {@code install} (startup: what is wrapped, with which policy
 * and backend, what is refused), {@code delivery} (the path of every delivery: attempts,
 * the decision, the backend's wait) and {@code settlement} (forwarding and settling a
 * delivery: acks, holds, pauses, notifications).
 */
@NullMarked
package io.github.tieredretry.listener;

import org.jspecify.annotations.NullMarked;
