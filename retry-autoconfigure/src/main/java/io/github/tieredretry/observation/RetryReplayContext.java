package io.github.tieredretry.observation;

import com.rabbitmq.client.AMQP;
import org.jspecify.annotations.Nullable;

/**
 * A parked message published back to its origin queue by a replay: observation
 * {@link RetryObservationDocumentation#REPLAY rabbitmq.retry.replay}.
 */
public final class RetryReplayContext extends RetrySenderContext {

	/** Outcome of a replay whose publish the broker confirmed. */
	public static final String REPLAYED = "replayed";

	/** Outcome of a replay whose publish failed: the message stays parked. */
	public static final String STAYED = "stayed";

	private final @Nullable String exception;

	private final long replay;

	private volatile @Nullable String stayReason;

	/**
	 * Create a context.
	 * @param properties the properties to replay with
	 * @param queue the origin queue it is replayed to
	 * @param exception the class name of the exception it was parked for, if known
	 * @param replay how often it has been replayed, this replay included
	 */
	public RetryReplayContext(AMQP.BasicProperties properties, String queue, @Nullable String exception, long replay) {
		super(properties, queue);
		this.exception = exception;
		this.replay = replay;
	}

	/**
	 * The publish failed: the message stays parked.
	 * @param reason why, e.g. {@code origin-queue-missing}
	 */
	public void stayed(String reason) {
		this.stayReason = reason;
	}

	/**
	 * What the replay did: {@value #REPLAYED} or {@value #STAYED}.
	 * @return the outcome
	 */
	public String getOutcome() {
		return (this.stayReason != null) ? STAYED : REPLAYED;
	}

	/**
	 * Why the message stayed parked.
	 * @return the reason, or {@code null} when it was replayed
	 */
	public @Nullable String getStayReason() {
		return this.stayReason;
	}

	/**
	 * The class name of the exception the message was parked for.
	 * @return it, or {@code null} when the parked message does not say
	 */
	public @Nullable String getException() {
		return this.exception;
	}

	/**
	 * How often the message has been replayed, this replay included.
	 * @return the count
	 */
	public long getReplay() {
		return this.replay;
	}

}
