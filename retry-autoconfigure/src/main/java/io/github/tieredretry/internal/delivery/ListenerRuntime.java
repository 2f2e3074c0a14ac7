package io.github.tieredretry.internal.delivery;

import java.time.Clock;
import java.time.Duration;
import java.util.List;

import io.github.tieredretry.internal.event.RetryEventPublisher;
import io.github.tieredretry.internal.forwarding.ForwardFailurePause;
import io.github.tieredretry.internal.forwarding.MessageForwarder;
import io.github.tieredretry.internal.forwarding.RetryExecutors;
import io.github.tieredretry.internal.headers.FailureHeaderSettings;
import io.github.tieredretry.internal.settlement.HeldMessages;
import io.github.tieredretry.listener.RetryAfterResolver;
import io.github.tieredretry.listener.RetryFailureClassifier;
import io.github.tieredretry.observation.RetryObservations;

/**
 * What every retryable listener of an application shares.
 *
 * @param capture the delivery capture installed on every retryable container
 * @param clock the clock
 * @param forwarder forwards to tiers and the parking lot
 * @param executors the starter's threads
 * @param failureInitialPause the pause after a first failed forward (also how long a
 * message held back while the broker blocks publishing waits before it goes back to its
 * queue)
 * @param failureMaxPause the longest pause after consecutive failed forwards
 * @param headerSettings how failures are described in headers
 * @param parkingLot the parking lot's name
 * @param events where retry events are published
 * @param heldMessages messages that go back to their queue after a pause
 * @param classifiers the application's failure classifiers, in order
 * @param retryAfterResolvers the application's retry-after resolvers, in order
 * @param observations observes forwards
 * @param async the attempts of asynchronous listeners that are still running
 */
public record ListenerRuntime(DeliveryCapture capture, Clock clock, MessageForwarder forwarder,
		RetryExecutors executors, Duration failureInitialPause, Duration failureMaxPause,
		FailureHeaderSettings headerSettings, String parkingLot, RetryEventPublisher events, HeldMessages heldMessages,
		List<RetryFailureClassifier> classifiers, List<RetryAfterResolver> retryAfterResolvers,
		RetryObservations observations, AsyncAttempts async) {

	public ForwardFailurePause newPause() {
		return new ForwardFailurePause(this.failureInitialPause, this.failureMaxPause);
	}

}
