package io.github.tieredretry.testsupport;

import io.github.tieredretry.event.MessageParkedEvent;

import org.springframework.context.event.EventListener;

/**
 * Records the messages the starter parked ({@link MessageParkedEvent}, published once the
 * broker confirmed the parked copy): once a message's event came, its copy is in every
 * queue the publish reached. Declare it as a bean.
 */
public final class ParkedEvents extends MessageEvents<MessageParkedEvent> {

	public ParkedEvents() {
		super(MessageParkedEvent::messageId);
	}

	@EventListener
	void onParked(MessageParkedEvent event) {
		record(event);
	}

}
