package io.github.tieredretry.internal.delivery;

import java.time.Clock;
import java.util.List;

import io.github.tieredretry.internal.headers.FailureHeaderSettings;
import io.github.tieredretry.listener.RetryAfterResolver;
import io.github.tieredretry.listener.RetryFailureClassifier;

/**
 * What the delivery path of every retryable listener of an application shares: how
 * deliveries are captured and attempts of asynchronous listeners followed, how a failure
 * is classified and described, and where it is parked. The forwarding path is made by
 * {@code ForwardSenders}.
 *
 * @param capture the delivery capture installed on every retryable container
 * @param async the attempts of asynchronous listeners that are still running
 * @param classifiers the application's failure classifiers, in order
 * @param retryAfterResolvers the application's retry-after resolvers, in order
 * @param headerSettings how failures are described in headers
 * @param parkingLot the parking lot's name
 * @param clock the clock
 */
public record ListenerRuntime(DeliveryCapture capture, AsyncAttempts async, List<RetryFailureClassifier> classifiers,
		List<RetryAfterResolver> retryAfterResolvers, FailureHeaderSettings headerSettings, String parkingLot,
		Clock clock) {

	public ListenerRuntime {
		classifiers = List.copyOf(classifiers);
		retryAfterResolvers = List.copyOf(retryAfterResolvers);
	}

}
