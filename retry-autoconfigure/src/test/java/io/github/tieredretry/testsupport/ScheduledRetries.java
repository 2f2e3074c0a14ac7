package io.github.tieredretry.testsupport;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.tieredretry.event.RetryScheduledEvent;

import org.springframework.context.event.EventListener;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Records the retries the starter schedules ({@link RetryScheduledEvent}), for tests that
 * look at a retry's tier, delay or due time. Declare it as a bean.
 */
public final class ScheduledRetries {

	private final List<RetryScheduledEvent> events = new CopyOnWriteArrayList<>();

	@EventListener
	void onRetryScheduled(RetryScheduledEvent event) {
		this.events.add(event);
	}

	/**
	 * The retries scheduled for a message, in order.
	 * @param messageId the message's id
	 * @return its retries
	 */
	public List<RetryScheduledEvent> of(String messageId) {
		return this.events.stream().filter((event) -> messageId.equals(event.messageId())).toList();
	}

	/**
	 * The first retry scheduled for a message, which must have one.
	 * @param messageId the message's id
	 * @return its first retry
	 */
	public RetryScheduledEvent first(String messageId) {
		List<RetryScheduledEvent> retries = of(messageId);
		assertThat(retries).as("retries scheduled for %s", messageId).isNotEmpty();
		return retries.get(0);
	}

	/**
	 * How many messages had a retry scheduled.
	 * @return the count of distinct message ids
	 */
	public long messages() {
		return this.events.stream().map(RetryScheduledEvent::messageId).filter(Objects::nonNull).distinct().count();
	}

}
