package io.github.tieredretry.reliability.consumer;

/**
 * A scripted failure that no retry can fix: listed in the listener's {@code noRetryOn}.
 */
public class PermanentFailureException extends RuntimeException {

	public PermanentFailureException(String message) {
		super(message);
	}

}
