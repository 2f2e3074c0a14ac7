package io.github.tieredretry.event;

import java.time.Duration;
import java.time.Instant;

/**
 * RabbitMQ unblocked the connection that forwards failed messages (its resource alarm
 * cleared, or the connection was replaced): the failed messages that waited are forwarded
 * now.
 *
 * @param reason what the broker said when it blocked the connection
 * @param since when the connection was blocked
 * @param duration how long it was blocked
 */
public record PublisherUnblockedEvent(String reason, Instant since, Duration duration) {
}
