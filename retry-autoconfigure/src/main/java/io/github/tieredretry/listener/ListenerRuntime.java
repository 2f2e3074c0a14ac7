package io.github.tieredretry.listener;

import java.time.Clock;

import io.github.tieredretry.forwarding.MessageForwarder;
import io.github.tieredretry.headers.FailureHeaderSettings;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.context.ApplicationEventPublisher;

/**
 * What every retryable listener shares: forwarding, failure pause, capture of deliveries, settings.
 *
 * @param capture the delivery capture installed on every retryable container
 * @param clock the clock
 * @param forwarder forwards to tiers and the parking lot
 * @param headerSettings how failures are described in headers
 * @param parkingLot the parking lot's name
 * @param events where retry events are published
 */
record ListenerRuntime(DeliveryCapture capture, Clock clock, MessageForwarder forwarder,
		FailureHeaderSettings headerSettings, String parkingLot, ApplicationEventPublisher events) {

	private static final Log logger = LogFactory.getLog(ListenerRuntime.class);

	/**
	 * Publish an event. The message has already been moved on at this point, so a failing event
	 * listener must not make the container requeue it (which would only create a duplicate).
	 * @param event the event
	 */
	void publish(Object event) {
		try {
			this.events.publishEvent(event);
		}
		catch (RuntimeException ex) {
			logger.warn("A listener of " + event.getClass().getSimpleName() + " failed; ignored", ex);
		}
	}

}
