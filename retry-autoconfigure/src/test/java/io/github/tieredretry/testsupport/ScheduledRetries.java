package io.github.tieredretry.testsupport;

import java.util.List;

import io.github.tieredretry.event.RetryScheduledEvent;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Records the retries the starter schedules ({@link RetryScheduledEvent}), for tests that
 * look at a retry's tier, delay or due time. Declare it as a bean.
 */
public final class ScheduledRetries extends MessageEvents<RetryScheduledEvent> {

	public ScheduledRetries() {
		super(RetryScheduledEvent.class, RetryScheduledEvent::messageId);
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

}
