package io.github.tieredretry.testsupport;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * Events of one type that the starter published about messages, recorded by a bean of a
 * test's application, to be looked up by message id.
 *
 * @param <E> the type of event
 */
public abstract class MessageEvents<E> {

	private final List<E> events = new CopyOnWriteArrayList<>();

	private final Function<E, @Nullable String> messageId;

	protected MessageEvents(Function<E, @Nullable String> messageId) {
		this.messageId = messageId;
	}

	protected void record(E event) {
		this.events.add(event);
	}

	/**
	 * The events of a message, in order.
	 * @param messageId the message's id
	 * @return its events
	 */
	public List<E> of(String messageId) {
		return this.events.stream().filter((event) -> messageId.equals(this.messageId.apply(event))).toList();
	}

	/**
	 * How many messages had an event.
	 * @return the count of distinct message ids
	 */
	public long messages() {
		return this.events.stream().map(this.messageId).filter((id) -> id != null).distinct().count();
	}

}
