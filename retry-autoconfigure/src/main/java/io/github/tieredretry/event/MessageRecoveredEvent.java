package io.github.tieredretry.event;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * A message was processed successfully after at least one retry.
 *
 * @param queue the queue whose listener succeeded
 * @param retryCount the retry that succeeded
 * @param recoveryTime from the first failure to this success
 * @param exception class name of the exception of the last failure before this success
 * @param messageId the message's {@code message-id}, if it has one
 */
public record MessageRecoveredEvent(String queue, long retryCount, Duration recoveryTime, String exception,
		@Nullable String messageId) {
}
