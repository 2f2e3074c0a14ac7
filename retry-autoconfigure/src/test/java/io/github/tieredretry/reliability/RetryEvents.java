package io.github.tieredretry.reliability;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.tieredretry.event.ForwardFailedEvent;
import io.github.tieredretry.event.MessageParkedEvent;
import io.github.tieredretry.event.RetryScheduledEvent;

import org.springframework.amqp.rabbit.listener.ListenerContainerConsumerFailedEvent;
import org.springframework.context.event.EventListener;

/**
 * Records the starter's events, so that tests can see forwards fail and succeed, and the
 * listener containers' consumer failures (a lost connection).
 */
class RetryEvents {

	final List<ForwardFailedEvent> forwardFailures = new CopyOnWriteArrayList<>();

	final List<RetryScheduledEvent> scheduled = new CopyOnWriteArrayList<>();

	final List<MessageParkedEvent> parked = new CopyOnWriteArrayList<>();

	final List<ListenerContainerConsumerFailedEvent> consumerFailures = new CopyOnWriteArrayList<>();

	@EventListener
	void onForwardFailed(ForwardFailedEvent event) {
		this.forwardFailures.add(event);
	}

	@EventListener
	void onScheduled(RetryScheduledEvent event) {
		this.scheduled.add(event);
	}

	@EventListener
	void onParked(MessageParkedEvent event) {
		this.parked.add(event);
	}

	@EventListener
	void onConsumerFailed(ListenerContainerConsumerFailedEvent event) {
		this.consumerFailures.add(event);
	}

	long forwardFailuresOf(String messageId) {
		return this.forwardFailures.stream().filter((event) -> messageId.equals(event.messageId())).count();
	}

}
