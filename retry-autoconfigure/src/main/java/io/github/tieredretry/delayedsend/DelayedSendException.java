package io.github.tieredretry.delayedsend;

import org.springframework.amqp.AmqpException;

/**
 * A delayed send failed: the broker did not confirm its entry into the tiers (the message
 * was most likely not scheduled, and the caller may send it again), or, as the exception
 * named in a parked message's {@code retry-exception} header, its target did not take it
 * when it was due.
 * <p>
 * A send that was not confirmed may be scheduled all the same: when the connection closes
 * or the broker stops after the broker took the message but before its confirm reached
 * the application (a restart, a crash), the send fails although the message waits in the
 * tiers. Sending it again then delivers it twice, as the at-least-once contract allows; a
 * receiver that must not see it twice deduplicates (on the message id, say).
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
