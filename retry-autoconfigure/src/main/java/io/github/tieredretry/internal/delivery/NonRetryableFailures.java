package io.github.tieredretry.internal.delivery;

import java.util.IdentityHashMap;
import java.util.Map;

import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.support.converter.MessageConversionException;
import org.springframework.messaging.handler.invocation.MethodArgumentResolutionException;

/**
 * Failures that no retry can fix, whatever the policy says: the payload could not be
 * converted or bound to the listener method's parameters. The same set Spring AMQP's
 * {@code ConditionalRejectingErrorHandler} treats as fatal.
 */
public final class NonRetryableFailures {

	private NonRetryableFailures() {
	}

	/**
	 * Whether the cause chain loops back on itself. Spring's exception type filter walks
	 * causes without cycle detection, so such a failure must not reach a
	 * {@code retry-on}/{@code no-retry-on} check.
	 * @param failure the failure
	 * @return whether a cause repeats
	 */
	static boolean hasCyclicCauseChain(Throwable failure) {
		Map<Throwable, Boolean> seen = new IdentityHashMap<>();
		for (Throwable current = failure; current != null; current = ListenerFailures.causeOf(current)) {
			if (seen.put(current, true) != null) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Whether the failure can never be retried: a payload failure, a producer-side batch,
	 * or a listener that explicitly asked not to be redelivered
	 * ({@link AmqpRejectAndDontRequeueException}: parked instead).
	 * @param failure the failure
	 * @return whether to park the message at once
	 */
	static boolean isNeverRetried(Throwable failure) {
		Throwable cause = ListenerFailures.unwrap(failure);
		return cause instanceof ProducerBatchNotSupportedException || cause instanceof AmqpRejectAndDontRequeueException
				|| isPayloadFailure(failure);
	}

	/**
	 * Whether the failure, or any of its causes, is a payload failure.
	 * @param failure the failure
	 * @return whether retrying is pointless
	 */
	static boolean isPayloadFailure(Throwable failure) {
		Map<Throwable, Boolean> seen = new IdentityHashMap<>();
		for (Throwable current = failure; current != null
				&& seen.put(current, true) == null; current = ListenerFailures.causeOf(current)) {
			if (current instanceof MessageConversionException
					|| current instanceof org.springframework.messaging.converter.MessageConversionException
					|| current instanceof MethodArgumentResolutionException || current instanceof NoSuchMethodException
					|| current instanceof ClassCastException) {
				return true;
			}
		}
		return false;
	}

}
