package io.github.tieredretry.internal.delivery;

import java.time.Instant;

import io.github.tieredretry.internal.headers.FailureDetails;
import io.github.tieredretry.internal.headers.HeaderChanges;
import io.github.tieredretry.internal.headers.RetryHeaderValues;
import io.github.tieredretry.internal.policy.FailureDecision;
import io.github.tieredretry.internal.policy.RetryDecider;
import io.github.tieredretry.internal.policy.RetryState;
import io.github.tieredretry.internal.settlement.Forward;
import io.github.tieredretry.internal.settlement.ForwardSender;

import org.springframework.amqp.core.MessageProperties;

/**
 * Where a failed message of an AMQP 0-9-1 listener waits for its retry: the backend, as a
 * strategy. Each knows where the retry state of a delivery is kept, whether a return the
 * broker counted costs the message anything, and how a retry is made to wait.
 * {@link DeliveryOutcomes} asks its listener's backend which one runs, in one place, and
 * is otherwise the same for both.
 */
public abstract sealed class RetryWait permits RetryWait.InATier, RetryWait.InItsQueue {

	final RetryDecider decider;

	final ForwardSender sender;

	RetryWait(RetryDecider decider, ForwardSender sender) {
		this.decider = decider;
		this.sender = sender;
	}

	/**
	 * The retry state of a delivery on its queue.
	 * @param properties the message's properties
	 * @param queue the queue it was consumed from
	 * @param countedReturns the returns of it the broker has counted
	 * @param now the time
	 * @return its retry state
	 */
	abstract RetryState stateOf(MessageProperties properties, String queue, long countedReturns, Instant now);

	/**
	 * Whether a message the broker has counted returns of must not wait in its consumer
	 * (a paused listener, a breaker's probe): on the tiers every counted return spends
	 * one of its lives on a quorum queue, for nothing. On the broker backend the count is
	 * its retry count, which the broker keeps anyway.
	 * @return whether counted returns are costly
	 */
	abstract boolean countedReturnsAreCostly();

	/**
	 * Make a retry wait for its due time.
	 * @param delivery the failed delivery
	 * @param retry the decision
	 * @param details the failure, as headers describe it
	 * @param cause the failure
	 */
	abstract void retry(Delivery delivery, FailureDecision.Retry retry, FailureDetails details, Throwable cause);

	/**
	 * The tiers: the retry state travels in the message's {@code retry-*} headers, and a
	 * retry is forwarded to its tier with publisher confirms, the original acked once
	 * confirmed.
	 */
	static final class InATier extends RetryWait {

		InATier(RetryDecider decider, ForwardSender sender) {
			super(decider, sender);
		}

		@Override
		RetryState stateOf(MessageProperties properties, String queue, long countedReturns, Instant now) {
			return RetryHeaderValues.readState(properties.getHeaders(), properties.getRetryCount(), queue);
		}

		@Override
		boolean countedReturnsAreCostly() {
			return true;
		}

		@Override
		void retry(Delivery delivery, FailureDecision.Retry retry, FailureDetails details, Throwable cause) {
			this.sender.send(delivery.forward(new Forward.Retry(retry, details, cause), Forward.tierQueue(retry.tier()),
					HeaderChanges.forRetry(delivery.queue(), retry, details)), delivery.acknowledgement());
		}

	}

	/**
	 * The broker (RabbitMQ 4.3's delayed retry): nothing is written into the message, its
	 * retries are the broker's count of its failed deliveries, and a retry is a
	 * {@code basic.reject} that the queue holds for the policy's delay. A retry whose
	 * failure chose its delay ({@link io.github.tieredretry.policy.RetryAfter}) cannot be
	 * held for that delay by a queue whose delays are fixed: it waits in the tiers, as a
	 * retry of the tiers does, and comes back as a new message whose headers carry its
	 * retries. So do its later retries: the queue would hold them for the delays of its
	 * own count, which starts again at zero, and so too early.
	 */
	static final class InItsQueue extends RetryWait {

		InItsQueue(RetryDecider decider, ForwardSender sender) {
			super(decider, sender);
		}

		@Override
		RetryState stateOf(MessageProperties properties, String queue, long countedReturns, Instant now) {
			RetryState fromTier = RetryHeaderValues.readState(properties.getHeaders(), properties.getRetryCount(),
					queue);
			if (fromTier.retries() > 0) {
				// Its due time holds for its first delivery back only: a later one is a
				// retry the broker held.
				return new RetryState(fromTier.retries() + countedReturns, fromTier.firstFailure(),
						(countedReturns == 0) ? fromTier.due() : null);
			}
			return this.decider.brokerHeldState(countedReturns, now);
		}

		@Override
		boolean countedReturnsAreCostly() {
			return false;
		}

		@Override
		void retry(Delivery delivery, FailureDecision.Retry retry, FailureDetails details, Throwable cause) {
			boolean queueCountsItsRetries = delivery.state().retries() == delivery.acknowledgement().countedReturns();
			if (retry.chosen() || !queueCountsItsRetries) {
				this.sender.send(delivery.forward(new Forward.Retry(retry, details, cause),
						Forward.tierQueue(retry.tier()), HeaderChanges.forRetry(delivery.queue(), retry, details)),
						delivery.acknowledgement());
				return;
			}
			this.sender.retryInItsQueue(
					delivery.forward(new Forward.BrokerRetry(retry, details, cause), delivery.queue(),
							HeaderChanges.forRetry(delivery.queue(), retry, details)),
					delivery.acknowledgement()::rejectForRetry);
		}

	}

}
