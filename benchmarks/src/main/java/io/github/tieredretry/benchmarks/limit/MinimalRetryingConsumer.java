package io.github.tieredretry.benchmarks.limit;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import io.github.tieredretry.benchmarks.app.Workload;
import io.github.tieredretry.benchmarks.broker.BrokerOperations;
import io.github.tieredretry.benchmarks.broker.BrokerSettings;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.internal.topology.RetryTopology;
import org.jspecify.annotations.Nullable;

/**
 * The least a consumer can do for tiered retries, written directly against the RabbitMQ
 * Java client: what the broker allows, against which the starter is measured. Per message
 * it makes the broker operations the starter makes, and nothing else:
 * <ul>
 * <li>deliveries come from {@code basic.consume} with manual acks, on one channel per
 * consumer (as many as the containers' concurrency), each with the containers' prefetch
 * ({@code basic.qos});</li>
 * <li>a success: one {@code basic.ack} of the delivery;</li>
 * <li>a failure: one {@code basic.publish} of the same body and properties, persistent
 * and mandatory, with the retry headers the starter writes, to the starter's delay
 * exchange and tier, on a connection of its own in confirm mode; when the broker confirms
 * it, one {@code basic.ack} of the original (on a nack, {@code basic.nack} with
 * requeue).</li>
 * </ul>
 * Unlike the starter, it converts nothing, hands nothing to other threads and publishes
 * no events: a delivery is handled on the client's dispatch thread, and the original is
 * acked by the confirm listener, on the publisher connection's I/O thread. All forwards
 * share one channel (the starter gives each forward in flight a cached channel of its
 * own; both make one publish and get one confirm per forward). The tiers, the delay
 * exchange and the queue's binding to the return exchange are declared beforehand. It
 * never parks: no benchmark message fails more often than it has delays.
 */
public final class MinimalRetryingConsumer implements AutoCloseable {

	/** AMQP delivery mode 2. */
	private static final int PERSISTENT = 2;

	private final String queue;

	private final int prefetch;

	private final int concurrency;

	private final List<Duration> delays;

	private final Workload workload;

	private final Connection consumerConnection;

	private final Connection publisherConnection;

	private final Channel publisher;

	/**
	 * Originals whose forward awaits its confirm, by publish sequence number; one confirm
	 * may cover several.
	 */
	private final ConcurrentNavigableMap<Long, Delivery> unconfirmed = new ConcurrentSkipListMap<>();

	private final AtomicInteger returned = new AtomicInteger();

	private final List<QueueConsumer> consumers = new ArrayList<>();

	/**
	 * Connect a consumer; it consumes only once {@linkplain #start() started}.
	 * @param broker the broker
	 * @param queue the queue to consume, bound to the return exchange with its name as
	 * routing key
	 * @param prefetch the prefetch of each consumer
	 * @param concurrency how many consumers
	 * @param delays the delay before retry 1, 2, …, each exactly a tier (the last
	 * repeats)
	 * @param workload what it does with each message
	 */
	public MinimalRetryingConsumer(BrokerSettings broker, String queue, int prefetch, int concurrency,
			List<Duration> delays, Workload workload) {
		this.queue = queue;
		this.prefetch = prefetch;
		this.concurrency = concurrency;
		this.delays = List.copyOf(delays);
		this.workload = workload;
		// A connection of its own for forwards, like the starter's publisher connection.
		this.publisherConnection = BrokerOperations.connect(broker, "tiered-retry-benchmarks-limit-publisher");
		try {
			this.publisher = this.publisherConnection.createChannel();
			this.publisher.confirmSelect();
			this.publisher.addConfirmListener((sequence, multiple) -> settle(sequence, multiple, true),
					(sequence, multiple) -> settle(sequence, multiple, false));
			this.publisher.addReturnListener((returnedMessage) -> this.returned.incrementAndGet());
			this.consumerConnection = BrokerOperations.connect(broker, "tiered-retry-benchmarks-limit-consumer");
		}
		catch (IOException | RuntimeException ex) {
			closeQuietly(this.publisherConnection);
			throw new IllegalStateException("Cannot set up the limit side on " + queue + ": " + ex.getMessage(), ex);
		}
	}

	public String queue() {
		return this.queue;
	}

	public Workload workload() {
		return this.workload;
	}

	/**
	 * Start the consumers.
	 */
	public synchronized void start() {
		try {
			for (int index = 0; index < this.concurrency; index++) {
				QueueConsumer consumer = new QueueConsumer(this.consumerConnection.createChannel());
				this.consumers.add(consumer);
				consumer.getChannel().basicQos(this.prefetch);
				consumer.getChannel().basicConsume(this.queue, false, consumer);
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot consume " + this.queue + ": " + ex.getMessage(), ex);
		}
	}

	/**
	 * Stop the consumers: closing their channels gives back what they had prefetched.
	 * @throws IllegalStateException when a forward was returned as unroutable since the
	 * last stop (its tier is missing: the round could not complete)
	 */
	public synchronized void stop() {
		this.consumers.forEach(QueueConsumer::close);
		this.consumers.clear();
		int unroutable = this.returned.getAndSet(0);
		if (unroutable > 0) {
			throw new IllegalStateException(unroutable + " forwards from " + this.queue + " were returned as "
					+ "unroutable: the tiers must be declared before the limit side runs");
		}
	}

	private void onDelivery(Channel channel, long deliveryTag, AMQP.BasicProperties properties, byte[] body)
			throws IOException {
		Map<String, @Nullable Object> headers = (properties.getHeaders() != null) ? properties.getHeaders() : Map.of();
		try {
			this.workload.handle(properties.getMessageId(), headers);
		}
		catch (Workload.SimulatedFailure failure) {
			forward(new Delivery(channel, deliveryTag, properties.getMessageId()), properties, headers, body, failure);
			return;
		}
		channel.basicAck(deliveryTag, false);
	}

	private void forward(Delivery original, AMQP.BasicProperties properties, Map<String, @Nullable Object> headers,
			byte[] body, RuntimeException failure) throws IOException {
		long retries = (headers.get(RetryHeaders.COUNT) instanceof Number count) ? count.longValue() : 0;
		Duration delay = this.delays.get((int) Math.min(retries, this.delays.size() - 1));
		long now = System.currentTimeMillis();
		// The headers the starter writes on a retry: the broker stores and moves as many
		// bytes for both sides.
		Map<String, @Nullable Object> retryHeaders = new HashMap<>(headers);
		retryHeaders.put(RetryHeaders.COUNT, retries + 1);
		retryHeaders.put(RetryHeaders.QUEUE, this.queue);
		retryHeaders.put(RetryHeaders.DUE, now + delay.toMillis());
		retryHeaders.putIfAbsent(RetryHeaders.FIRST_FAILURE, now);
		retryHeaders.put(RetryHeaders.EXCEPTION, failure.getClass().getName());
		retryHeaders.put(RetryHeaders.ERROR, failure.getMessage());
		retryHeaders.put(RetryHeaders.TIER, TierLadder.nameOf(delay));
		AMQP.BasicProperties forwarded = properties.builder()
			.headers(retryHeaders)
			.deliveryMode(PERSISTENT)
			.expiration(null)
			.build();
		synchronized (this.publisher) {
			// Recorded before the publish: the confirm may arrive before basicPublish
			// returns.
			this.unconfirmed.put(this.publisher.getNextPublishSeqNo(), original);
			this.publisher.basicPublish(RetryTopology.DELAY_EXCHANGE, this.queue, true, forwarded, body);
		}
	}

	// The broker confirmed (or refused) one forward, or with {@code multiple} every
	// forward up to one.
	private void settle(long sequence, boolean multiple, boolean confirmed) {
		Map<Long, Delivery> settled = multiple ? this.unconfirmed.headMap(sequence, true)
				: this.unconfirmed.subMap(sequence, true, sequence, true);
		for (Iterator<Delivery> originals = settled.values().iterator(); originals.hasNext();) {
			Delivery original = originals.next();
			originals.remove();
			original.settle(confirmed);
			if (confirmed) {
				this.workload.forwarded(original.messageId());
			}
		}
	}

	@Override
	public synchronized void close() {
		this.consumers.clear();
		closeQuietly(this.consumerConnection);
		closeQuietly(this.publisherConnection);
	}

	private static void closeQuietly(AutoCloseable closeable) {
		try {
			closeable.close();
		}
		catch (Exception ex) {
			// Closing anyway; the broker requeues what was not acked.
		}
	}

	/**
	 * One consumer on a channel of its own. Like a listener container, it finishes the
	 * message in hand before its channel closes: the lock is never contended while it
	 * runs.
	 */
	private final class QueueConsumer extends DefaultConsumer {

		QueueConsumer(Channel channel) {
			super(channel);
		}

		@Override
		public synchronized void handleDelivery(String consumerTag, Envelope envelope, AMQP.BasicProperties properties,
				byte[] body) throws IOException {
			if (getChannel().isOpen()) {
				onDelivery(getChannel(), envelope.getDeliveryTag(), properties, body);
			}
		}

		synchronized void close() {
			closeQuietly(getChannel());
		}

	}

	/** A delivery whose forward awaits its confirm. */
	private record Delivery(Channel channel, long deliveryTag, @Nullable String messageId) {

		void settle(boolean confirmed) {
			try {
				if (confirmed) {
					this.channel.basicAck(this.deliveryTag, false);
				}
				else {
					this.channel.basicNack(this.deliveryTag, false, true);
				}
			}
			catch (IOException | RuntimeException ex) {
				// The consumer's channel is closed (the side stopped): the broker has put
				// the original back.
			}
		}

	}

}
