package io.github.tieredretry.internal.delivery;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.tieredretry.listener.BatchListenerFailedException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.support.AmqpHeaders;
import org.springframework.amqp.support.converter.MessageConversionException;

/**
 * What a batch listener's outcome means for each message of its batch: the
 * {@link BatchListenerFailedException} contract.
 */
public final class BatchOutcomes {

	private static final Log logger = LogFactory.getLog(RetryingBatchMessageListener.class);

	private BatchOutcomes() {
	}

	/**
	 * The outcome of each delivery of a batch.
	 * @param round the deliveries the listener was called with
	 * @param refused the delivery tags of messages the adapter could not convert, left
	 * out of the list the listener was given
	 * @param payload the list the listener was given, if known
	 * @param failure what the listener threw or its result completed with, or
	 * {@code null}
	 * @param listener the listener's name, for log lines
	 * @return one outcome per delivery, in the round's order
	 */
	static List<ListenerCall.Outcome> of(List<Delivery> round, Set<Long> refused, @Nullable List<?> payload,
			@Nullable Throwable failure, String listener) {
		List<ListenerCall.Outcome> outcomes = new ArrayList<>(round.size());
		List<Integer> given = new ArrayList<>(round.size());
		for (int i = 0; i < round.size(); i++) {
			if (refused.contains(round.get(i).message().getMessageProperties().getDeliveryTag())) {
				outcomes.add(ListenerCall.Outcome.failed(new MessageConversionException("Spring AMQP's batch "
						+ "listener adapter could not convert the message for the listener (its log says why)")));
			}
			else {
				outcomes.add(ListenerCall.Outcome.PROCESSED);
				given.add(i);
			}
		}
		if (failure == null) {
			return outcomes;
		}
		BatchListenerFailedException named = find(failure);
		if (named == null) {
			given.forEach((i) -> outcomes.set(i, ListenerCall.Outcome.failed(failure)));
			return outcomes;
		}
		if (named.isStoppedAtFailure()) {
			Object element = named.getFailedElement();
			int index = (element != null) ? indexOf(element, round, given, payload)
					: named.getFailures().keySet().iterator().next();
			if (index < 0 || index >= given.size()) {
				return wholeBatch(outcomes, given, named, listener);
			}
			Throwable cause = (named.getCause() != null) ? named.getCause() : named;
			outcomes.set(given.get(index), ListenerCall.Outcome.failed(cause));
			for (int i = index + 1; i < given.size(); i++) {
				outcomes.set(given.get(i), ListenerCall.Outcome.NOT_ATTEMPTED);
			}
			return outcomes;
		}
		for (Map.Entry<Integer, Throwable> entry : named.getFailures().entrySet()) {
			if (entry.getKey() < 0 || entry.getKey() >= given.size()) {
				return wholeBatch(outcomes, given, named, listener);
			}
		}
		named.getFailures()
			.forEach((index, cause) -> outcomes.set(given.get(index), ListenerCall.Outcome.failed(cause)));
		return outcomes;
	}

	private static List<ListenerCall.Outcome> wholeBatch(List<ListenerCall.Outcome> outcomes, List<Integer> given,
			BatchListenerFailedException named, String listener) {
		logger.warn(listener + " threw a BatchListenerFailedException naming a message that is not in the list it "
				+ "was given (index " + named.getFailures().keySet() + " of " + given.size() + " messages, or an "
				+ "element not in it): every message of the batch counts as failed");
		given.forEach((i) -> outcomes.set(i, ListenerCall.Outcome.failed(named)));
		return outcomes;
	}

	// The index, in the list the listener was given, of an element a listener named.
	private static int indexOf(Object element, List<Delivery> round, List<Integer> given, @Nullable List<?> payload) {
		if (payload != null && payload.size() == given.size()) {
			for (int i = 0; i < payload.size(); i++) {
				if (payload.get(i) == element) {
					return i;
				}
			}
		}
		for (int i = 0; i < given.size(); i++) {
			Message message = round.get(given.get(i)).message();
			if (message == element) {
				return i;
			}
			if (element instanceof org.springframework.messaging.Message<?> messagingMessage
					&& messagingMessage.getHeaders().get(AmqpHeaders.DELIVERY_TAG) instanceof Long tag
					&& tag == message.getMessageProperties().getDeliveryTag()) {
				return i;
			}
		}
		return -1;
	}

	// The exception that names the failed messages, wherever in the cause chain Spring's
	// adapter (or a future's completion) has put it.
	private static @Nullable BatchListenerFailedException find(Throwable failure) {
		Map<Throwable, Boolean> seen = new IdentityHashMap<>();
		for (Throwable current = failure; current != null
				&& seen.put(current, true) == null; current = ListenerFailures.causeOf(current)) {
			if (current instanceof BatchListenerFailedException named) {
				return named;
			}
		}
		return null;
	}

}
