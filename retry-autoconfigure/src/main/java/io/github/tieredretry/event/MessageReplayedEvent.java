package io.github.tieredretry.event;

import org.jspecify.annotations.Nullable;

/**
 * A parked message was replayed: published (confirmed) to the queue it failed on, and
 * removed from the parking lot.
 *
 * @param queue the queue it was replayed to
 * @param replayCount how often it has been replayed, this replay included
 * @param messageId the message's {@code message-id}, if it has one
 */
public record MessageReplayedEvent(String queue, long replayCount, @Nullable String messageId) {
}
