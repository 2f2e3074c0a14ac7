package io.github.tieredretry.internal.settlement;

import java.time.Duration;
import java.time.Instant;
import java.util.regex.Pattern;

import io.github.tieredretry.event.ForwardFailedEvent;
import io.github.tieredretry.event.MessageParkedEvent;
import io.github.tieredretry.event.MessageRecoveredEvent;
import io.github.tieredretry.event.RetryScheduledEvent;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.event.RetryEventPublisher;
import io.github.tieredretry.internal.headers.FailureDetails;
import io.github.tieredretry.internal.policy.FailureDecision;
import io.github.tieredretry.internal.policy.RetryState;
import io.github.tieredretry.internal.policy.TierLadder;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.Message;

/**
 * What a retryable listener tells the world about its failed messages: log lines and
 * application events (metrics are recorded from the events). Called once the message has
 * been acked or requeued; events are published later, on the event thread.
 * <p>
 * Log levels are chosen so that the default level shows what a user needs without
 * flooding: a retry is one INFO line, a parked message one WARN line with the stack trace
 * of its last failure, a failed forward one ERROR line.
 */
public final class RetryNotifications {

	private static final Log logger = LogFactory.getLog(RetryNotifications.class);

	/**
	 * A recovered message's exception class comes from a header: only a plausible class
	 * name is kept.
	 */
	private static final Pattern CLASS_NAME = Pattern.compile("[\\p{L}_$][\\p{L}\\p{N}_$.]{0,199}");

	private final String listenerName;

	private final int maxRetries;

	private final RetryEventPublisher events;

	public RetryNotifications(String listenerName, int maxRetries, RetryEventPublisher events) {
		this.listenerName = listenerName;
		this.maxRetries = maxRetries;
		this.events = events;
	}

	/**
	 * A forward was confirmed and its original acked.
	 * @param forward the forward
	 */
	void forwarded(Forward forward) {
		Message message = forward.message();
		String messageId = message.getMessageProperties().getMessageId();
		if (forward.step() instanceof Forward.Hop hop) {
			if (logger.isDebugEnabled()) {
				logger
					.debug("Message " + Deliveries.describe(message) + " on '" + forward.queue() + "' is not due until "
							+ forward.state().due() + "; waiting in tier " + TierLadder.nameOf(hop.tier()));
			}
		}
		else if (forward.step() instanceof Forward.Postpone postpone) {
			if (logger.isInfoEnabled()) {
				logger.info(this.listenerName + " is paused, and RabbitMQ has given message "
						+ Deliveries.describe(message) + " back to '" + forward.queue() + "' "
						+ postpone.countedReturns() + " time(s) (x-delivery-count): it waits in tier "
						+ TierLadder.nameOf(postpone.tier()) + " instead of in a consumer, without spending a "
						+ "retry, so that the queue's delivery limit is not spent while the listener is paused");
			}
		}
		else if (forward.step() instanceof Forward.Retry retry) {
			FailureDecision.Retry decision = retry.decision();
			if (logger.isInfoEnabled()) {
				logger.info(this.listenerName + " failed on message " + Deliveries.describe(message) + " from '"
						+ forward.queue() + "' (" + summary(retry.details()) + "); retry " + decision.retryNumber()
						+ " of " + this.maxRetries + " in " + TierLadder.nameOf(decision.delay()) + " (tier "
						+ TierLadder.nameOf(decision.tier()) + ")");
			}
			this.events.publish(
					new RetryScheduledEvent(forward.queue(), decision.retryNumber(), TierLadder.nameOf(decision.tier()),
							decision.delay(), decision.due(), retry.details().exceptionClass(), messageId));
		}
		else if (forward.step() instanceof Forward.BrokerRetry retry) {
			FailureDecision.Retry decision = retry.decision();
			if (logger.isInfoEnabled()) {
				logger.info(this.listenerName + " failed on message " + Deliveries.describe(message) + " from '"
						+ forward.queue() + "' (" + summary(retry.details()) + "); retry " + decision.retryNumber()
						+ " of " + this.maxRetries + " in " + TierLadder.nameOf(decision.delay())
						+ " (held by RabbitMQ in '" + forward.queue() + "')");
			}
			this.events.publish(new RetryScheduledEvent(forward.queue(), decision.retryNumber(), Forward.BROKER_TIER,
					decision.delay(), decision.due(), retry.details().exceptionClass(), messageId));
		}
		else if (forward.step() instanceof Forward.Park park) {
			String line = "Parked message " + Deliveries.describe(message) + " from '" + forward.queue() + "' in '"
					+ forward.target() + "' (" + park.decision().reason().value() + ", after "
					+ forward.state().retries() + " retries) because " + this.listenerName + " failed: "
					+ summary(park.details());
			// The stack trace once per message, where it ends: retries log one line each.
			logQuietly(true, line, park.failure());
			this.events.publish(new MessageParkedEvent(forward.queue(), forward.state().retries(),
					park.decision().reason(), park.details().exceptionClass(), messageId));
		}
	}

	/**
	 * A forward failed; it is tried again after a pause, its original held meanwhile.
	 * @param forward the forward
	 * @param failure why it failed
	 * @param pauseMillis the pause before the forward is tried again
	 * @param episodes consecutive failure episodes of this target
	 */
	void forwardFailed(Forward forward, Throwable failure, long pauseMillis, int episodes) {
		logQuietly(false,
				"Could not forward message " + Deliveries.describe(forward.message()) + " from '" + forward.queue()
						+ "' to '" + forward.target() + "' (" + failure.getMessage() + "); it stays unacknowledged "
						+ "and is forwarded again after a pause of " + pauseMillis + " ms (" + episodes
						+ " consecutive failure episodes)",
				null);
		this.events.publish(new ForwardFailedEvent(forward.queue(), forward.state().retries(), forward.target(),
				exceptionOf(forward), String.valueOf(failure.getMessage()),
				forward.message().getMessageProperties().getMessageId()));
	}

	/**
	 * A forward was not even tried: the broker blocks publishing and this consumer
	 * already holds as many failed messages as it may.
	 * @param forward the forward
	 * @param pauseMillis the pause before the message goes back to its queue
	 */
	void heldBack(Forward forward, long pauseMillis) {
		if (logger.isDebugEnabled()) {
			logger.debug("RabbitMQ blocks forwarding and this consumer already holds its share of failed messages: "
					+ "message " + Deliveries.describe(forward.message()) + " goes back to '" + forward.queue()
					+ "' in " + pauseMillis + " ms and will be tried again");
		}
	}

	/**
	 * A retried message was processed.
	 * @param message the message
	 * @param queue its queue
	 * @param state its retry state
	 * @param now the time
	 */
	public void recovered(Message message, String queue, RetryState state, Instant now) {
		Instant firstFailure = state.firstFailure();
		Duration recoveryTime = (firstFailure != null && !firstFailure.isAfter(now))
				? Duration.between(firstFailure, now) : Duration.ZERO;
		Object exception = message.getMessageProperties().getHeaders().get(RetryHeaders.EXCEPTION);
		if (logger.isDebugEnabled()) {
			logger.debug("Message " + Deliveries.describe(message) + " on '" + queue + "' recovered on retry "
					+ state.retries() + ", " + recoveryTime.toMillis() + " ms after its first failure");
		}
		String exceptionClass = (exception != null && CLASS_NAME.matcher(exception.toString()).matches())
				? exception.toString() : "";
		this.events.publish(new MessageRecoveredEvent(queue, state.retries(), recoveryTime, exceptionClass,
				message.getMessageProperties().getMessageId()));
	}

	/**
	 * The wrapper itself could not handle a message; it goes back to its queue after a
	 * pause.
	 * @param message the message
	 * @param failure what went wrong
	 * @param pauseMillis the pause
	 */
	public void unexpectedFailure(Message message, Throwable failure, long pauseMillis) {
		logQuietly(false, "Listener " + this.listenerName + " could not handle message " + Deliveries.describe(message)
				+ "; it goes back to its queue in " + pauseMillis + " ms", failure);
	}

	private static String summary(FailureDetails details) {
		return details.exceptionClass() + ": " + details.error();
	}

	private static String exceptionOf(Forward forward) {
		if (forward.step() instanceof Forward.Retry retry) {
			return retry.details().exceptionClass();
		}
		if (forward.step() instanceof Forward.Park park) {
			return park.details().exceptionClass();
		}
		return "";
	}

	// Log, even if the exception cannot be printed: an exception whose {@code toString()}
	// throws must not keep its message from moving on.
	private static void logQuietly(boolean warn, String line, @Nullable Throwable failure) {
		try {
			if (warn) {
				logger.warn(line, failure);
			}
			else {
				logger.error(line, failure);
			}
		}
		catch (RuntimeException | LinkageError | StackOverflowError ex) {
			String withoutTrace = line + " (its exception could not be printed: " + ex.getClass().getName() + ")";
			if (warn) {
				logger.warn(withoutTrace);
			}
			else {
				logger.error(withoutTrace);
			}
		}
	}

}
