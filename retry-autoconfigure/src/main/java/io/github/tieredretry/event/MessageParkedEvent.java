package io.github.tieredretry.event;

import io.github.tieredretry.policy.ParkedReason;
import org.jspecify.annotations.Nullable;

/**
 * A message was forwarded (confirmed) to the parking lot.
 *
 * @param queue the queue whose listener failed
 * @param retryCount retries made before parking
 * @param reason why it was parked
 * @param exception class name of the listener's exception
 * @param messageId the message's {@code message-id}, if it has one
 */
public record MessageParkedEvent(String queue, long retryCount, ParkedReason reason, String exception,
		@Nullable String messageId) {
}
