package io.github.tieredretry.internal.delivery;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * One call of a retryable listener for a round of its deliveries (one message, or the
 * messages of a batch), and what its outcome means for each of them.
 */
public interface ListenerCall {

	/**
	 * Call the listener.
	 * @return its asynchronous result, or {@code null} when the listener was done when it
	 * returned
	 * @throws Exception what the listener threw
	 */
	@Nullable AsyncResult call() throws Exception;

	/**
	 * What the call's outcome means for each delivery of the round.
	 * @param failure what the listener threw or its result completed with, or
	 * {@code null} when it succeeded
	 * @return one outcome per delivery, in the round's order
	 */
	List<Outcome> outcomes(@Nullable Throwable failure);

	/**
	 * What became of one delivery in a call.
	 *
	 * @param attempted whether the listener attempted it (a batch listener that stopped
	 * at a failure did not attempt the messages after it)
	 * @param failure why the attempt failed, or {@code null} when it was processed
	 */
	record Outcome(boolean attempted, @Nullable Throwable failure) {

		/** Processed. */
		static final Outcome PROCESSED = new Outcome(true, null);

		/** Not attempted: it goes to the listener again, with no attempt spent. */
		static final Outcome NOT_ATTEMPTED = new Outcome(false, null);

		static Outcome failed(Throwable failure) {
			return new Outcome(true, failure);
		}

	}

}
