package io.github.tieredretry.testsupport;

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
public final class RetryEvents {

	public final List<ForwardFailedEvent> forwardFailures = new CopyOnWriteArrayList<>();

	public final List<RetryScheduledEvent> scheduled = new CopyOnWriteArrayList<>();

	public final List<MessageParkedEvent> parked = new CopyOnWriteArrayList<>();

	public final List<ListenerContainerConsumerFailedEvent> consumerFailures = new CopyOnWriteArrayList<>();

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

	public long forwardFailuresOf(String messageId) {
		return this.forwardFailures.stream().filter((event) -> messageId.equals(event.messageId())).count();
	}

	/**
	 * Whether a retry of the message has been scheduled (its forward confirmed).
	 * @param messageId the message id
	 * @return whether a {@link RetryScheduledEvent} names it
	 */
	public boolean scheduled(String messageId) {
		return this.scheduled.stream().anyMatch((event) -> messageId.equals(event.messageId()));
	}

}
