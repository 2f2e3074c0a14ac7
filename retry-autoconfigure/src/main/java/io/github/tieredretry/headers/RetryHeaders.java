package io.github.tieredretry.headers;

import java.util.Set;

/**
 * Names of the headers the starter writes. None starts with {@code x-}: RabbitMQ 4
 * ignores client-set {@code x-} headers, and {@code x-death} is never used for counting.
 */
public final class RetryHeaders {

	/**
	 * Retries made so far (a long); the listener sees 1 on the first retry. Same header
	 * as Spring AMQP's {@code MessageProperties#getRetryCount()}.
	 */
	public static final String COUNT = "retry-count";

	/** The queue whose listener failed; a retry returns only to this queue. */
	public static final String QUEUE = "retry-queue";

	/**
	 * When the pending retry falls due, epoch milliseconds; the listener is never invoked
	 * before.
	 */
	public static final String DUE = "retry-due";

	/** When the first attempt failed, epoch milliseconds. */
	public static final String FIRST_FAILURE = "retry-first-failure";

	/**
	 * Class name of the listener's own exception (unwrapped from
	 * {@code ListenerExecutionFailedException}).
	 */
	public static final String EXCEPTION = "retry-exception";

	/** The exception's message, truncated to {@code retry.headers.max-error-length}. */
	public static final String ERROR = "retry-error";

	/**
	 * The exception's stack trace, truncated; only with
	 * {@code retry.headers.include-stack-trace=true}.
	 */
	public static final String STACK_TRACE = "retry-stack-trace";

	/**
	 * The tier a message was sent to, e.g. {@code 10s}; the delay exchange routes on it.
	 */
	public static final String TIER = "retry-tier";

	/**
	 * The message's own {@code expiration}, removed on forwarding so that the tier's TTL
	 * rules.
	 */
	public static final String ORIGINAL_EXPIRATION = "retry-original-expiration";

	/**
	 * The message's own {@code user-id}, when it is not the user the starter publishes
	 * as: RabbitMQ refuses a publish whose {@code user-id} differs from the connection's
	 * user, so it cannot be kept as a property.
	 */
	public static final String ORIGINAL_USER_ID = "retry-original-user-id";

	/**
	 * The message's own {@code CC} header (extra routing keys), removed on forwarding so
	 * that a forwarded copy reaches only its tier, the parking lot or its origin queue.
	 */
	public static final String ORIGINAL_CC = "retry-original-cc";

	/**
	 * The parking lot of the application that forwarded the message to a tier: should its
	 * queue be gone when the retry is due, the message is parked there.
	 */
	public static final String PARKING_LOT = "retry-parking-lot";

	/**
	 * Why the message was parked: {@code exhausted}, {@code not-retryable},
	 * {@code timeout} or {@code unroutable}.
	 */
	public static final String PARKED_REASON = "retry-parked-reason";

	/** When the message was parked, epoch milliseconds. */
	public static final String PARKED_AT = "retry-parked-at";

	/** How often the message was replayed from the parking lot. */
	public static final String REPLAY_COUNT = "retry-replay-count";

	/** When the message was last replayed from the parking lot, epoch milliseconds. */
	public static final String REPLAYED_AT = "retry-replayed-at";

	/**
	 * The exchange a delayed send goes to once due ({@code ""} for the default exchange).
	 */
	public static final String SEND_EXCHANGE = "retry-send-exchange";

	/** The routing key a delayed send is published with once due. */
	public static final String SEND_ROUTING_KEY = "retry-send-routing-key";

	/**
	 * The sent message's own {@code BCC} header, kept while it waits in the tiers (the
	 * broker would route on it, and remove it, at every hop).
	 */
	public static final String SEND_BCC = "retry-send-bcc";

	/**
	 * The sent message's own delivery mode when it was not persistent: in the tiers it is
	 * persistent, and its target gets it as sent.
	 */
	public static final String SEND_DELIVERY_MODE = "retry-send-delivery-mode";

	/**
	 * Which application instance published a delayed send's current hop, and when:
	 * {@code <instance>@<epoch ms>}; counts the scheduled messages per tier.
	 */
	public static final String SEND_HOP = "retry-send-hop";

	/**
	 * The broker's count of a quorum queue message's returns (RabbitMQ 4.0 to 4.2: every
	 * return; 4.3: rejects and closed channels), which its delivery limit is checked
	 * against. Set by the broker on delivery, it describes the delivery, not the message:
	 * never copied into a forwarded or replayed message.
	 */
	public static final String BROKER_DELIVERY_COUNT = "x-delivery-count";

	/**
	 * The broker's count of every return of a quorum queue message (RabbitMQ 4.3). Never
	 * copied, like {@link #BROKER_DELIVERY_COUNT}.
	 */
	public static final String BROKER_ACQUIRED_COUNT = "x-acquired-count";

	/**
	 * The broker's counts of one delivery, which a new copy of the message must not
	 * carry.
	 */
	public static final Set<String> BROKER_DELIVERY_COUNTS = Set.of(BROKER_DELIVERY_COUNT, BROKER_ACQUIRED_COUNT);

	private RetryHeaders() {
	}

}
