package io.github.tieredretry.benchmarks.broker;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;

/**
 * Publishes the benchmark's messages: 1 KB bodies, persistent, each publish confirmed by
 * the broker.
 */
public final class MessagePublisher implements AutoCloseable {

	/** Every benchmark message's body size. */
	public static final int BODY_SIZE = 1024;

	/**
	 * Header naming the round a message belongs to: messages left over from another round
	 * are ignored.
	 */
	public static final String ROUND_HEADER = "bench-round";

	/** Header with the number of attempts that fail before the message is processed. */
	public static final String FAILING_ATTEMPTS_HEADER = "bench-failing-attempts";

	private static final int CONFIRM_BATCH = 500;

	private static final long CONFIRM_TIMEOUT_MILLIS = 60_000;

	private final byte[] body = new byte[BODY_SIZE];

	private final Connection connection;

	private final Channel channel;

	public MessagePublisher(BrokerSettings settings) {
		// Incompressible, like most real payloads; fixed seed so every run sends the same
		// bytes.
		new Random(42).nextBytes(this.body);
		this.connection = BrokerOperations.connect(settings, "tiered-retry-benchmarks-publisher");
		try {
			this.channel = this.connection.createChannel();
			this.channel.confirmSelect();
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot open the publisher's channel", ex);
		}
	}

	/**
	 * Which messages of a round fail, and how often.
	 *
	 * @param every every n-th message fails ({@code 0}: none)
	 * @param attempts how many attempts of such a message fail before it is processed
	 */
	public record Failures(int every, int attempts) {

		/** No message fails. */
		public static final Failures NONE = new Failures(0, 0);

		public static Failures all(int attempts) {
			return new Failures(1, attempts);
		}

		boolean fails(int index) {
			// Offset by half a period so that failures are spread evenly, not at the very
			// start.
			return this.every > 0 && index % this.every == this.every / 2;
		}

		public int failingCount(int messages) {
			int count = 0;
			for (int index = 0; index < messages; index++) {
				if (fails(index)) {
					count++;
				}
			}
			return count;
		}

	}

	/**
	 * Publish a backlog to a queue, as fast as confirms allow.
	 * @param queue the queue (through the default exchange)
	 * @param round the round's id, which prefixes every message id
	 * @param count how many messages
	 * @param failures which of them fail
	 */
	public void publishBacklog(String queue, String round, int count, Failures failures) {
		try {
			for (int index = 0; index < count; index++) {
				this.channel.basicPublish("", queue, properties(round, index, failures), this.body);
				if ((index + 1) % CONFIRM_BATCH == 0) {
					this.channel.waitForConfirmsOrDie(CONFIRM_TIMEOUT_MILLIS);
				}
			}
			this.channel.waitForConfirmsOrDie(CONFIRM_TIMEOUT_MILLIS);
		}
		catch (IOException | InterruptedException | TimeoutException ex) {
			throw failed("publish the backlog to " + queue, ex);
		}
	}

	/**
	 * Publish at a steady rate, so that a benchmark measures its subject and not a
	 * backlog.
	 * @param queue the queue (through the default exchange)
	 * @param round the round's id
	 * @param count how many messages
	 * @param perSecond messages per second
	 * @param failures which of them fail
	 */
	public void publishPaced(String queue, String round, int count, int perSecond, Failures failures) {
		long interval = 1_000_000_000L / perSecond;
		long start = System.nanoTime();
		try {
			for (int index = 0; index < count; index++) {
				long due = start + index * interval;
				long wait = due - System.nanoTime();
				if (wait > 0) {
					LockSupport.parkNanos(wait);
				}
				this.channel.basicPublish("", queue, properties(round, index, failures), this.body);
				if ((index + 1) % 50 == 0) {
					this.channel.waitForConfirmsOrDie(CONFIRM_TIMEOUT_MILLIS);
				}
			}
			this.channel.waitForConfirmsOrDie(CONFIRM_TIMEOUT_MILLIS);
		}
		catch (IOException | InterruptedException | TimeoutException ex) {
			throw failed("publish paced messages to " + queue, ex);
		}
	}

	/**
	 * Publish a stream at a steady rate until told to stop, counting each message once it
	 * is sent: what keeps arriving at a listener whatever happens to it. Confirms are
	 * awaited every 50 messages, as by {@link #publishPaced}.
	 * @param queue the queue (through the default exchange)
	 * @param round the round's id
	 * @param perSecond messages per second
	 * @param keepGoing asked before each message; {@code false} ends the stream
	 * @param published counts the messages sent so far, for other threads to read
	 */
	public void publishStream(String queue, String round, int perSecond, BooleanSupplier keepGoing,
			AtomicInteger published) {
		long interval = 1_000_000_000L / perSecond;
		long start = System.nanoTime();
		try {
			for (int index = 0; keepGoing.getAsBoolean(); index++) {
				long due = start + index * interval;
				long wait = due - System.nanoTime();
				if (wait > 0) {
					LockSupport.parkNanos(wait);
				}
				this.channel.basicPublish("", queue, properties(round, index, Failures.NONE), this.body);
				published.incrementAndGet();
				if ((index + 1) % 50 == 0) {
					this.channel.waitForConfirmsOrDie(CONFIRM_TIMEOUT_MILLIS);
				}
			}
			this.channel.waitForConfirmsOrDie(CONFIRM_TIMEOUT_MILLIS);
		}
		catch (IOException | InterruptedException | TimeoutException ex) {
			throw failed("publish a stream to " + queue, ex);
		}
	}

	/**
	 * The raw baseline of forwarding: one publish at a time, persistent, mandatory, each
	 * waiting for its confirm, on a channel of its own; what any confirmed forward costs
	 * at least on this broker.
	 * @param exchange the exchange
	 * @param routingKey the routing key
	 * @param headers headers routing the message (e.g. the tier)
	 * @param count how many publishes
	 * @return nanoseconds from the first publish to the last confirm
	 */
	public long confirmedPublishLoop(String exchange, String routingKey, Map<String, Object> headers, int count) {
		AtomicInteger returned = new AtomicInteger();
		try (Channel loopChannel = this.connection.createChannel()) {
			loopChannel.confirmSelect();
			loopChannel.addReturnListener((reply) -> returned.incrementAndGet());
			long start = System.nanoTime();
			for (int index = 0; index < count; index++) {
				Map<String, Object> messageHeaders = new HashMap<>(headers);
				AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().deliveryMode(2)
					.contentType("application/octet-stream")
					.messageId("raw-" + index)
					.headers(messageHeaders)
					.build();
				loopChannel.basicPublish(exchange, routingKey, true, properties, this.body);
				loopChannel.waitForConfirmsOrDie(CONFIRM_TIMEOUT_MILLIS);
			}
			long elapsed = System.nanoTime() - start;
			if (returned.get() > 0) {
				throw new IllegalStateException(
						returned.get() + " raw publishes to exchange '" + exchange + "' were returned as unroutable");
			}
			return elapsed;
		}
		catch (IOException | InterruptedException | TimeoutException ex) {
			throw failed("run the confirmed publish loop", ex);
		}
	}

	private AMQP.BasicProperties properties(String round, int index, Failures failures) {
		Map<String, Object> headers = new HashMap<>();
		headers.put(ROUND_HEADER, round);
		if (failures.fails(index)) {
			headers.put(FAILING_ATTEMPTS_HEADER, failures.attempts());
		}
		return new AMQP.BasicProperties.Builder().deliveryMode(2)
			.contentType("application/octet-stream")
			.messageId(round + "-" + index)
			.headers(headers)
			.build();
	}

	private static IllegalStateException failed(String what, Exception ex) {
		if (ex instanceof InterruptedException) {
			Thread.currentThread().interrupt();
		}
		return new IllegalStateException("Could not " + what + ": " + ex.getMessage(), ex);
	}

	@Override
	public void close() {
		try {
			this.connection.close();
		}
		catch (IOException | RuntimeException ex) {
			// Closing anyway.
		}
	}

}
