package io.github.tieredretry.internal.forwarding;

import org.springframework.amqp.AmqpException;

/**
 * A forward to a tier or the parking lot was not confirmed by the broker: nacked,
 * returned as unroutable, timed out, or the publish itself failed. The original message
 * must then not be acked.
 */
public class ForwardFailedException extends AmqpException {

	/**
	 * How a forward failed.
	 */
	public enum Kind {

		/** The broker nacked the publish. */
		NACKED,

		/**
		 * The broker returned the message: nothing it could route to (reply code 312,
		 * NO_ROUTE).
		 */
		RETURNED,

		/** No confirm arrived within {@code retry.publish.confirm-timeout}. */
		TIMEOUT,

		/**
		 * The broker closed the channel because the exchange does not exist (reply code
		 * 404, NOT_FOUND): part of the retry topology was deleted.
		 */
		MISSING_EXCHANGE,

		/** The publish could not be made: no connection, channel closed, interrupted. */
		PUBLISH_ERROR,

		/**
		 * Nothing was published: RabbitMQ blocks the publisher connection during a
		 * resource alarm (memory or disk), and the caller chose not to wait for it to
		 * clear.
		 */
		BLOCKED

	}

	private final Kind kind;

	public ForwardFailedException(Kind kind, String message, Throwable cause) {
		super(message, cause);
		this.kind = kind;
	}

	public ForwardFailedException(Kind kind, String message) {
		super(message);
		this.kind = kind;
	}

	public Kind getKind() {
		return this.kind;
	}

}
