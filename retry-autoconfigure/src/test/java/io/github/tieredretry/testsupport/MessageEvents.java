package io.github.tieredretry.testsupport;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

import io.github.tieredretry.event.MessageParkedEvent;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationListener;
import org.springframework.context.PayloadApplicationEvent;

/**
 * Records the events of one type that the starter published about messages, to be looked
 * up by message id. Declare it as a bean.
 *
 * @param <E> the type of event
 */
public class MessageEvents<E> implements ApplicationListener<PayloadApplicationEvent<?>> {

	private final List<E> events = new CopyOnWriteArrayList<>();

	private final Class<E> type;

	private final Function<E, @Nullable String> messageId;

	/**
	 * Record the events of a type.
	 * @param type the type
	 * @param messageId the id of the message an event is about
	 */
	public MessageEvents(Class<E> type, Function<E, @Nullable String> messageId) {
		this.type = type;
		this.messageId = messageId;
	}

	/**
	 * Record the parked messages ({@link MessageParkedEvent}, published once the broker
	 * confirmed the parked copy: once a message's event came, its copy is in every queue
	 * the publish reached).
	 * @return the events
	 */
	public static MessageEvents<MessageParkedEvent> parked() {
		return new MessageEvents<>(MessageParkedEvent.class, MessageParkedEvent::messageId);
	}

	@Override
	public void onApplicationEvent(PayloadApplicationEvent<?> event) {
		if (this.type.isInstance(event.getPayload())) {
			this.events.add(this.type.cast(event.getPayload()));
		}
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
