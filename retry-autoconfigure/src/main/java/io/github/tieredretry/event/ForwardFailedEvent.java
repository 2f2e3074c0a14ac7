package io.github.tieredretry.event;

import org.jspecify.annotations.Nullable;

/**
 * A forward to a tier or the parking lot was not confirmed; the original message stays
 * unacknowledged and the forward is tried again after a pause.
 *
 * @param queue the queue whose listener failed
 * @param retryCount the message's retry count
 * @param target where the forward went: a tier queue or the parking lot
 * @param exception class name of the listener's exception
 * @param cause why the forward failed
 * @param messageId the message's {@code message-id}, if it has one
 */
public record ForwardFailedEvent(String queue, long retryCount, String target, String exception, String cause,
		@Nullable String messageId) {
}
