package io.github.tieredretry.event;

import java.time.Duration;
import java.util.List;

/**
 * A retryable listener's circuit breaker closed again: its consumers take messages as
 * usual.
 *
 * @param listener the listener, e.g. {@code OrderListener#onOrder}
 * @param queues the queues it consumes
 * @param pausedFor how long it was paused
 */
public record ListenerResumedEvent(String listener, List<String> queues, Duration pausedFor) {
}
