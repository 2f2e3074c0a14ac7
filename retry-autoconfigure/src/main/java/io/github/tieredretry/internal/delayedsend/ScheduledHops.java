package io.github.tieredretry.internal.delayedsend;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.forwarding.MessageForwarder;
import io.github.tieredretry.internal.policy.TierLadder;
import org.jspecify.annotations.Nullable;

/**
 * Moves a delayed send on by one hop: into the tier that {@link TierLadder#tierFor}
 * chooses for the time it still has to wait (so that it is never early, and late by at
 * most the smallest tier), or, when it is due, straight to the scheduled queue. The tiers
 * dead-letter it back to the scheduled queue, whose consumer sends it on.
 * <p>
 * Internal: public for the starter's auto-configuration only.
 */
public final class ScheduledHops {

	private final String scheduledQueue;

	private final TierLadder tiers;

	private final MessageForwarder forwarder;

	private final ScheduledCounts counts;

	private final Clock clock;

	/**
	 * Create the hops of a scheduled queue.
	 * @param scheduledQueue the queue the tiers return delayed sends to
	 * @param tiers the tiers
	 * @param forwarder publishes the hops
	 * @param counts counts the hops per tier
	 * @param clock the clock
	 */
	public ScheduledHops(String scheduledQueue, TierLadder tiers, MessageForwarder forwarder, ScheduledCounts counts,
			Clock clock) {
		this.scheduledQueue = scheduledQueue;
		this.tiers = tiers;
		this.forwarder = forwarder;
		this.counts = counts;
		this.clock = clock;
	}

	String scheduledQueue() {
		return this.scheduledQueue;
	}

	Clock clock() {
		return this.clock;
	}

	/**
	 * A hop came back to the scheduled queue: it no longer waits in its tier.
	 * @param received its properties as received
	 */
	void arrived(AMQP.BasicProperties received) {
		Duration tier = ScheduledProperties.tierOf(received, this.tiers);
		if (tier != null) {
			this.counts.left(tier, received.getHeaders().get(RetryHeaders.SEND_HOP));
		}
	}

	/**
	 * Publish the next hop.
	 * @param properties the properties in the tiers (with the target and due time)
	 * @param body the body
	 * @param due when it is due, or {@code null} for at once
	 * @return completes when the broker confirmed the hop
	 */
	CompletableFuture<Void> forward(AMQP.BasicProperties properties, byte[] body, @Nullable Instant due) {
		Instant now = this.clock.instant();
		String stamp = this.counts.stamp(now);
		Duration wait = (due != null) ? Duration.between(now, due) : Duration.ZERO;
		if (wait.isNegative() || wait.isZero()) {
			return this.forwarder.toReturn(this.scheduledQueue, ScheduledProperties.hop(properties, null, stamp), body);
		}
		Duration tier = this.tiers.tierFor(wait);
		// Counted before the publish: a short tier may return the hop before its confirm
		// is handled.
		this.counts.entered(tier, now);
		return this.forwarder.toTier(this.scheduledQueue, ScheduledProperties.hop(properties, tier, stamp), body)
			.whenComplete((confirmed, failure) -> {
				if (failure != null) {
					this.counts.left(tier, stamp);
				}
			});
	}

}
