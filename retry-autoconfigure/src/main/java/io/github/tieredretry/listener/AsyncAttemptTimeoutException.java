package io.github.tieredretry.listener;

import java.util.concurrent.TimeoutException;

/**
 * An asynchronous {@code @RetryableListener} (one that returns a
 * {@code CompletableFuture} or a {@code Mono}, or a Kotlin {@code suspend} function) did
 * not complete its result within {@code retry.async.attempt-timeout}: the attempt failed,
 * its result was cancelled, and the message is retried or parked like any failure (header
 * {@code retry-exception} names this class).
 */
public class AsyncAttemptTimeoutException extends TimeoutException {

	/**
	 * Create the exception.
	 * @param message what timed out
	 */
	public AsyncAttemptTimeoutException(String message) {
		super(message);
	}

}
