package io.github.tieredretry.internal.event;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.context.ApplicationEventPublisher;

/**
 * Publishes the starter's application events on a thread of their own. The message an
 * event describes has already been acked or requeued when its event is published: a slow
 * or failing event listener (one that calls a pager, say) can neither delay an
 * acknowledgement nor make a message go back to its queue. Events are published in the
 * order they happened.
 */
public final class RetryEventPublisher {

	private static final Log logger = LogFactory.getLog(RetryEventPublisher.class);

	private final ApplicationEventPublisher publisher;

	private final Executor executor;

	/**
	 * Create a publisher.
	 * @param publisher the application's event publisher
	 * @param executor the single thread events are published on
	 */
	public RetryEventPublisher(ApplicationEventPublisher publisher, Executor executor) {
		this.publisher = publisher;
		this.executor = executor;
	}

	/**
	 * Publish an event later, on the event thread.
	 * @param event the event
	 */
	public void publish(Object event) {
		try {
			this.executor.execute(() -> publishNow(event));
		}
		catch (RejectedExecutionException ex) {
			// The application is stopping: no one is left to be told.
		}
	}

	private void publishNow(Object event) {
		try {
			this.publisher.publishEvent(event);
		}
		catch (RuntimeException ex) {
			logger.warn("A listener of " + event.getClass().getSimpleName() + " failed; ignored", ex);
		}
	}

}
