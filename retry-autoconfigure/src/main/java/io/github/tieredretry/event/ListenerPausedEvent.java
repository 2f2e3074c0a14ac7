package io.github.tieredretry.event;

import java.time.Instant;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * A retryable listener's circuit breaker opened: its consumers take no new message (its
 * downstream looks down), and nothing is forwarded or parked meanwhile.
 *
 * @param listener the listener, e.g. {@code OrderListener#onOrder}
 * @param queues the queues it consumes
 * @param failureRate the failure rate that opened the breaker, in percent (-1 when an
 * operator opened it)
 * @param resumesAt when the listener tries a few messages again, or {@code null} when an
 * operator opened the breaker (it stays open until closed)
 */
public record ListenerPausedEvent(String listener, List<String> queues, float failureRate,
		@Nullable Instant resumesAt) {
}
