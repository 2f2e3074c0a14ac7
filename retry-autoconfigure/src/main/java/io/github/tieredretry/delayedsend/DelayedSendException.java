package io.github.tieredretry.delayedsend;

import org.springframework.amqp.AmqpException;

/**
 * A delayed send failed: the broker did not confirm its entry into the tiers (the message
 * was not scheduled, the caller may send it again), or, as the exception named in a
 * parked message's {@code retry-exception} header, its target did not take it when it was
 * due.
 */
public class DelayedSendException extends AmqpException {

	/**
	 * Create an exception.
	 * @param message what failed
	 * @param cause why
	 */
	public DelayedSendException(String message, Throwable cause) {
		super(message, cause);
	}

}
