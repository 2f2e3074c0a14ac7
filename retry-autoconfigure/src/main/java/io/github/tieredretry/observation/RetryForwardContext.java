package io.github.tieredretry.observation;

import java.time.Duration;

import com.rabbitmq.client.AMQP;
import org.jspecify.annotations.Nullable;

/**
 * A failed message forwarded to a delay tier or to the parking lot: observation
 * {@link RetryObservationDocumentation#FORWARD rabbitmq.retry.forward}.
 */
public final class RetryForwardContext extends RetrySenderContext {

	/** Outcome of a forward to a tier: the message is retried later. */
	public static final String RETRIED = "retried";

	/** Outcome of a forward to the parking lot. */
	public static final String PARKED = "parked";

	/**
	 * Outcome of a forward of a message that arrived before its retry was due (its delay
	 * is longer than the largest tier): it waits in a tier again, without invoking the
	 * listener.
	 */
	public static final String HOP = "hop";

	private final String target;

	private final String outcome;

	private final @Nullable String tier;

	private final @Nullable Duration delay;

	private final @Nullable String exception;

	private final @Nullable String reason;

	private final long attempt;

	private RetryForwardContext(AMQP.BasicProperties properties, String queue, String target, String outcome,
			@Nullable String tier, @Nullable Duration delay, @Nullable String exception, @Nullable String reason,
			long attempt) {
		super(properties, queue);
		this.target = target;
		this.outcome = outcome;
		this.tier = tier;
		this.delay = delay;
		this.exception = exception;
		this.reason = reason;
		this.attempt = attempt;
	}

	/**
	 * A message retried through a tier.
	 * @param properties the properties to forward with
	 * @param queue the queue whose listener failed
	 * @param target the tier queue
	 * @param tier the tier's name, e.g. {@code 10s}
	 * @param delay the delay before the retry, as drawn with the policy's jitter
	 * @param exception the class name of the listener's exception
	 * @param attempt the attempt that failed, 1 for the first delivery
	 * @return the context
	 */
	public static RetryForwardContext retried(AMQP.BasicProperties properties, String queue, String target, String tier,
			Duration delay, String exception, long attempt) {
		return new RetryForwardContext(properties, queue, target, RETRIED, tier, delay, exception, null, attempt);
	}

	/**
	 * A message parked.
	 * @param properties the properties to forward with
	 * @param queue the queue whose listener failed
	 * @param target the parking lot
	 * @param reason why, e.g. {@code exhausted}
	 * @param exception the class name of the listener's exception
	 * @param attempt the attempt that failed, 1 for the first delivery
	 * @return the context
	 */
	public static RetryForwardContext parked(AMQP.BasicProperties properties, String queue, String target,
			String reason, String exception, long attempt) {
		return new RetryForwardContext(properties, queue, target, PARKED, null, null, exception, reason, attempt);
	}

	/**
	 * A message that waits in a tier again because its retry is not due yet.
	 * @param properties the properties to forward with
	 * @param queue the queue it came from
	 * @param target the tier queue
	 * @param tier the tier's name
	 * @param attempt the attempt it waits for
	 * @return the context
	 */
	public static RetryForwardContext hop(AMQP.BasicProperties properties, String queue, String target, String tier,
			long attempt) {
		return new RetryForwardContext(properties, queue, target, HOP, tier, null, null, null, attempt);
	}

	/**
	 * The queue the message is forwarded to: a tier queue or the parking lot.
	 * @return its name
	 */
	public String getTarget() {
		return this.target;
	}

	/**
	 * What the forward does: {@value #RETRIED}, {@value #PARKED} or {@value #HOP}.
	 * @return the outcome
	 */
	public String getOutcome() {
		return this.outcome;
	}

	/**
	 * The tier the message waits in.
	 * @return its name, e.g. {@code 10s}, or {@code null} when it is parked
	 */
	public @Nullable String getTier() {
		return this.tier;
	}

	/**
	 * The delay before the retry this forward schedules: the policy's, drawn with its
	 * jitter, as in header {@code retry-due}.
	 * @return the delay, or {@code null} when the forward schedules no retry (park, hop)
	 */
	public @Nullable Duration getDelay() {
		return this.delay;
	}

	/**
	 * The class name of the listener's exception.
	 * @return it, or {@code null} for a hop (the listener was not invoked)
	 */
	public @Nullable String getException() {
		return this.exception;
	}

	/**
	 * Why the message was parked.
	 * @return {@code exhausted}, {@code not-retryable} or {@code timeout}, or
	 * {@code null} when it was not parked
	 */
	public @Nullable String getReason() {
		return this.reason;
	}

	/**
	 * The attempt the message was delivered for: 1 for the first delivery, 2 for the
	 * first retry, and so on.
	 * @return the attempt
	 */
	public long getAttempt() {
		return this.attempt;
	}

}
