package io.github.tieredretry.event;

import java.time.Instant;

/**
 * RabbitMQ blocked the connection that forwards failed messages: a memory or disk alarm
 * is on. Failed messages wait in their consumer until it clears; healthy messages keep
 * flowing.
 *
 * @param reason what the broker said, e.g. {@code low on memory}
 * @param since when the connection was blocked
 */
public record PublisherBlockedEvent(String reason, Instant since) {
}
