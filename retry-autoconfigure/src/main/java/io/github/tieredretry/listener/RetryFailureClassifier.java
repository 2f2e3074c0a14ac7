package io.github.tieredretry.listener;

/**
 * Decides whether a listener's failure may be retried where its exception type alone
 * cannot say: an HTTP client error that carries status 400 (no retry fixes it) or 503 (a
 * retry may), a vendor error code, a message in a state no retry changes.
 * <p>
 * Declare one or more as beans; they are asked in
 * {@link org.springframework.core.annotation.Order order} for every failure of every
 * {@code @RetryableListener}, and the first that does not answer
 * {@link Classification#UNDECIDED} decides. When all answer {@code UNDECIDED}, the
 * listener's policy decides with its {@code retry-on} and {@code no-retry-on} exception
 * types. Failures no retry can fix whatever a classifier says (an unconvertible payload,
 * say) are parked before any classifier is asked.
 * <p>
 * A classifier runs on the listener's consumer thread for every failure: keep it fast and
 * free of I/O. If it throws, the failure is logged and the policy decides, as if it had
 * answered {@code UNDECIDED}.
 */
@FunctionalInterface
public interface RetryFailureClassifier {

	/**
	 * Classify a failure.
	 * @param listener the listener that failed
	 * @param failure what the listener threw (unwrapped from Spring AMQP's
	 * {@code ListenerExecutionFailedException})
	 * @return whether it may be retried, or {@link Classification#UNDECIDED} to leave it
	 * to the next classifier and finally the policy
	 */
	Classification classify(RetryableListenerInfo listener, Throwable failure);

	/** A classifier's answer. */
	enum Classification {

		/** Retry it through the tiers, while the policy has retries left. */
		RETRYABLE,

		/** Park it at once: no retry fixes it. */
		NOT_RETRYABLE,

		/**
		 * No opinion: the next classifier, and finally the policy's exception types,
		 * decide.
		 */
		UNDECIDED

	}

}
