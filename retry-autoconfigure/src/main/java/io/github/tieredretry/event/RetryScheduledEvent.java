package io.github.tieredretry.event;

import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * A failed message will be retried: forwarded (confirmed) to a delay tier, or, where the
 * broker holds the retries, given back to its queue (tier {@code broker}): rejected into
 * the queue's delayed retry over AMQP 0-9-1, or returned with its delivery time by a
 * listener of the AMQP 1.0 client.
 *
 * @param queue the queue whose listener failed
 * @param retryCount the retry that was scheduled (1 for the first retry)
 * @param tier the tier's name, e.g. {@code 10s}, or {@code broker}
 * @param delay the delay before this retry: the policy's, drawn with its jitter when it
 * has one (the delay the tiers serve, not the tier)
 * @param due when the retry falls due: when it failed plus {@code delay} (header
 * {@code retry-due} on the tiers; the delivery time given to the broker by an AMQP 1.0
 * listener)
 * @param exception class name of the listener's exception
 * @param messageId the message's {@code message-id}, if it has one
 */
public record RetryScheduledEvent(String queue, long retryCount, String tier, Duration delay, Instant due,
		String exception, @Nullable String messageId) {
}
