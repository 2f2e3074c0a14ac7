package io.github.tieredretry.testsupport;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.tieredretry.event.MessageParkedEvent;

import org.springframework.context.event.EventListener;

/**
 * Records the messages the starter parked ({@link MessageParkedEvent}, published once the
 * broker confirmed the parked copy): once a message's event came, its copy is in every
 * queue the publish reached. Declare it as a bean.
 */
public final class ParkedEvents {

	private final List<MessageParkedEvent> events = new CopyOnWriteArrayList<>();

	@EventListener
	void onParked(MessageParkedEvent event) {
		this.events.add(event);
	}

	/**
	 * The parkings of a message.
	 * @param messageId the message's id
	 * @return its events, in order
	 */
	public List<MessageParkedEvent> of(String messageId) {
		return this.events.stream().filter((event) -> messageId.equals(event.messageId())).toList();
	}

}
