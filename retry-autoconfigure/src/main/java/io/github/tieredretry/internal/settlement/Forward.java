package io.github.tieredretry.internal.settlement;

import java.time.Duration;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.internal.headers.FailureDetails;
import io.github.tieredretry.internal.policy.FailureDecision;
import io.github.tieredretry.internal.policy.RetryState;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.observation.RetryForwardContext;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.Message;

/**
 * One message on its way to a tier or to the parking lot: why, where to, and what is
 * published.
 *
 * @param message the message as the listener received it (for its id and logs)
 * @param queue the queue it was consumed from, the one a retry returns to
 * @param state its retry state on arrival
 * @param step why it is forwarded
 * @param target the queue it is forwarded to: a tier queue or the parking lot
 * @param properties the properties to publish
 * @param body the body to publish, as received
 */
public record Forward(Message message, String queue, RetryState state, Step step, String target,
		AMQP.BasicProperties properties, byte[] body) {

	/**
	 * What tags, events and logs say instead of a tier when the broker holds the retry.
	 */
	static final String BROKER_TIER = "broker";

	/** Why a message is forwarded. */
	public sealed interface Step permits Hop, Postpone, Retry, BrokerRetry, Park {

	}

	/**
	 * The message arrived before its retry was due (its delay is composed of several
	 * tiers): it waits in a tier again, without invoking the listener.
	 *
	 * @param tier the tier it waits in
	 */
	public record Hop(Duration tier) implements Step {
	}

	/**
	 * The listener is paused (its circuit breaker is open) and the broker has counted
	 * returns of the message already: it waits in a tier rather than in a consumer, and
	 * comes back to its queue as a new message, whose count starts again at zero. No
	 * retry is spent.
	 *
	 * @param tier the tier it waits in
	 * @param countedReturns the broker's count of its returns so far
	 */
	public record Postpone(Duration tier, long countedReturns) implements Step {
	}

	/**
	 * The listener failed and the policy retries the message.
	 *
	 * @param decision when and through which tier
	 * @param details what failed
	 * @param failure the listener's exception, for its observation
	 */
	public record Retry(FailureDecision.Retry decision, FailureDetails details, Throwable failure) implements Step {
	}

	/**
	 * The listener failed and the policy retries the message on the broker backend: it
	 * goes back to its own queue with {@code basic.reject}, for the queue's delayed retry
	 * to deliver it again after the policy's delay. Nothing is published.
	 *
	 * @param decision when (its tier is not used)
	 * @param details what failed
	 * @param failure the listener's exception, for its observation
	 */
	public record BrokerRetry(FailureDecision.Retry decision, FailureDetails details,
			Throwable failure) implements Step {
	}

	/**
	 * The listener failed and the message goes to the parking lot.
	 *
	 * @param decision why
	 * @param details what failed
	 * @param failure the listener's exception, for the log
	 */
	public record Park(FailureDecision.Park decision, FailureDetails details, Throwable failure) implements Step {
	}

	/**
	 * Whether the forward goes to a tier (else to the parking lot).
	 * @return whether it goes to a tier
	 */
	boolean toTier() {
		return !(this.step instanceof Park);
	}

	/**
	 * The listener's exception that made the message move on.
	 * @return it, or {@code null} for a hop or a postponement (the listener was not
	 * invoked)
	 */
	@Nullable Throwable failure() {
		if (this.step instanceof Retry retry) {
			return retry.failure();
		}
		if (this.step instanceof BrokerRetry retry) {
			return retry.failure();
		}
		return (this.step instanceof Park park) ? park.failure() : null;
	}

	/**
	 * What an observation of this forward records.
	 * @return the observation's context
	 */
	RetryForwardContext observationContext() {
		long attempt = this.state.retries() + 1;
		if (this.step instanceof Retry retry) {
			return RetryForwardContext.retried(this.properties, this.queue, this.target,
					TierLadder.nameOf(retry.decision().tier()), retry.decision().delay(),
					retry.details().exceptionClass(), attempt);
		}
		if (this.step instanceof BrokerRetry retry) {
			return RetryForwardContext.retried(this.properties, this.queue, this.target, BROKER_TIER,
					retry.decision().delay(), retry.details().exceptionClass(), attempt);
		}
		if (this.step instanceof Park park) {
			return RetryForwardContext.parked(this.properties, this.queue, this.target,
					park.decision().reason().value(), park.details().exceptionClass(), attempt);
		}
		Duration tier = (this.step instanceof Hop hop) ? hop.tier() : ((Postpone) this.step).tier();
		return RetryForwardContext.hop(this.properties, this.queue, this.target, TierLadder.nameOf(tier), attempt);
	}

	/**
	 * The tier queue for a tier.
	 * @param tier the tier
	 * @return its queue
	 */
	public static String tierQueue(Duration tier) {
		return RetryTopology.tierQueueName(tier);
	}

}
