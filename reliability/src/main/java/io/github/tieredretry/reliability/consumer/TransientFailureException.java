package io.github.tieredretry.reliability.consumer;

/**
 * A scripted failure that a retry can fix.
 */
public class TransientFailureException extends RuntimeException {

	public TransientFailureException(String message) {
		super(message);
	}

}
