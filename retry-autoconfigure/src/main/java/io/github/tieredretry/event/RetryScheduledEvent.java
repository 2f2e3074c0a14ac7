package io.github.tieredretry.event;

import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * A failed message was forwarded (confirmed) to a delay tier and will be retried.
 *
 * @param queue the queue whose listener failed
 * @param retryCount the retry that was scheduled (1 for the first retry)
 * @param tier the tier's name, e.g. {@code 10s}
 * @param delay the delay before this retry: the policy's, drawn with its jitter when it
 * has one (the delay the tiers serve, not the tier)
 * @param due when the retry falls due: when it failed plus {@code delay} (header
 * {@code retry-due})
 * @param exception class name of the listener's exception
 * @param messageId the message's {@code message-id}, if it has one
 */
public record RetryScheduledEvent(String queue, long retryCount, String tier, Duration delay, Instant due,
		String exception, @Nullable String messageId) {
}
