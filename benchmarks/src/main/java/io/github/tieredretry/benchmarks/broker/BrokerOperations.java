package io.github.tieredretry.benchmarks.broker;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeoutException;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;

/**
 * Plain AMQP client operations on the benchmark broker, and the run's footprint on it.
 * <p>
 * The broker may be shared: queues the run owns (unique names) are deleted at the end;
 * objects whose names every application shares (tier queues such as
 * {@code retry.delay.1s}, the retry exchanges) are deleted only if they did not exist
 * before the run, and only while unused and empty.
 */
public final class BrokerOperations implements AutoCloseable {

	private final BrokerSettings settings;

	private final Connection connection;

	private final Set<String> ownQueues = new LinkedHashSet<>();

	private final Set<String> ownExchanges = new LinkedHashSet<>();

	private final Set<String> sharedQueuesCreated = new LinkedHashSet<>();

	private final Set<String> sharedExchangesCreated = new LinkedHashSet<>();

	public BrokerOperations(BrokerSettings settings) {
		this.settings = settings;
		this.connection = connect(settings, "tiered-retry-benchmarks");
	}

	/**
	 * Open a plain AMQP client connection.
	 * @param settings the broker
	 * @param name the connection name shown by the broker
	 * @return the connection
	 */
	public static Connection connect(BrokerSettings settings, String name) {
		try {
			return settings.connectionFactory().newConnection(name);
		}
		catch (IOException | TimeoutException ex) {
			throw new IllegalStateException("No RabbitMQ at " + settings.address() + " for the benchmarks ("
					+ ex.getMessage() + "). Start one, or point SPRING_RABBITMQ_HOST/PORT/USERNAME/PASSWORD at one.",
					ex);
		}
	}

	public BrokerSettings settings() {
		return this.settings;
	}

	/**
	 * The broker's product and version, as it announces them on connection.
	 * @return e.g. {@code RabbitMQ 3.10.8}
	 */
	public String serverVersion() {
		Map<String, Object> properties = this.connection.getServerProperties();
		return properties.getOrDefault("product", "?") + " " + properties.getOrDefault("version", "?");
	}

	/**
	 * The broker's version, as it announces it on connection.
	 * @return e.g. {@code 4.3.6}
	 */
	public String version() {
		return String.valueOf(this.connection.getServerProperties().getOrDefault("version", "?"));
	}

	/**
	 * Declare a durable classic queue that this run owns; it is deleted by
	 * {@link #cleanUp()}.
	 * @param queue a name unique to this run
	 */
	public void declareOwnQueue(String queue) {
		run((channel) -> channel.queueDeclare(queue, true, false, false, Map.of()));
		this.ownQueues.add(queue);
	}

	/**
	 * Declare a durable direct exchange that this run owns; it is deleted by
	 * {@link #cleanUp()}.
	 * @param exchange a name unique to this run
	 */
	public void declareOwnExchange(String exchange) {
		run((channel) -> channel.exchangeDeclare(exchange, "direct", true));
		this.ownExchanges.add(exchange);
	}

	/**
	 * Remember a queue that an application of this run declared, for deletion by
	 * {@link #cleanUp()}.
	 * @param queue a name unique to this run
	 */
	public void ownQueueDeclaredElsewhere(String queue) {
		this.ownQueues.add(queue);
	}

	/**
	 * Note which of the shared objects an application is about to declare do not exist
	 * yet, so that {@link #cleanUp()} removes only those.
	 * @param queues shared queue names (tier queues)
	 * @param exchanges shared exchange names
	 */
	public void noteSharedObjects(Collection<String> queues, Collection<String> exchanges) {
		for (String queue : queues) {
			if (!this.sharedQueuesCreated.contains(queue) && !queueExists(queue)) {
				this.sharedQueuesCreated.add(queue);
			}
		}
		for (String exchange : exchanges) {
			if (!this.sharedExchangesCreated.contains(exchange) && !exchangeExists(exchange)) {
				this.sharedExchangesCreated.add(exchange);
			}
		}
	}

	/**
	 * Bind a queue to an exchange; the binding goes when the queue is deleted.
	 * @param queue the queue
	 * @param exchange the exchange
	 * @param routingKey the binding key
	 */
	public void bind(String queue, String exchange, String routingKey) {
		run((channel) -> channel.queueBind(queue, exchange, routingKey));
	}

	public void purge(String queue) {
		run((channel) -> channel.queuePurge(queue));
	}

	public long messageCount(String queue) {
		return run((channel) -> channel.messageCount(queue));
	}

	public boolean queueExists(String queue) {
		return passive((channel) -> channel.queueDeclarePassive(queue));
	}

	public boolean exchangeExists(String exchange) {
		return passive((channel) -> channel.exchangeDeclarePassive(exchange));
	}

	public void deleteQueue(String queue) {
		run((channel) -> channel.queueDelete(queue));
	}

	/**
	 * Delete what this run created: its own queues and exchanges, then the shared objects
	 * that did not exist before it, as long as nobody uses them.
	 * @return what could not be deleted, and why (empty when everything was)
	 */
	public List<String> cleanUp() {
		List<String> kept = new ArrayList<>();
		for (String queue : this.ownQueues) {
			if (!passive((channel) -> channel.queueDelete(queue))) {
				kept.add("queue " + queue + " (delete failed)");
			}
		}
		this.ownQueues.clear();
		for (String exchange : this.ownExchanges) {
			if (!passive((channel) -> channel.exchangeDelete(exchange))) {
				kept.add("exchange " + exchange + " (delete failed)");
			}
		}
		this.ownExchanges.clear();
		for (String queue : this.sharedQueuesCreated) {
			if (!deleteIfUnusedAndEmpty(queue)) {
				kept.add("queue " + queue + " (in use or not empty)");
			}
		}
		this.sharedQueuesCreated.clear();
		for (String exchange : this.sharedExchangesCreated) {
			if (!passive((channel) -> channel.exchangeDelete(exchange, true))) {
				kept.add("exchange " + exchange + " (still bound)");
			}
		}
		this.sharedExchangesCreated.clear();
		return kept;
	}

	// Quorum queues refuse {@code queue.delete} with if-unused or if-empty: look first,
	// then delete.
	private boolean deleteIfUnusedAndEmpty(String queue) {
		return passive((channel) -> {
			AMQP.Queue.DeclareOk state = channel.queueDeclarePassive(queue);
			if (state.getConsumerCount() > 0 || state.getMessageCount() > 0) {
				throw new IOException("in use or not empty");
			}
			return channel.queueDelete(queue);
		});
	}

	// Run an operation that may fail with a channel-level error, on a channel of its own.
	// Returns whether it succeeded
	private boolean passive(ChannelCall<?> call) {
		try (Channel channel = this.connection.createChannel()) {
			call.call(channel);
			return true;
		}
		catch (IOException | TimeoutException | RuntimeException ex) {
			return false;
		}
	}

	private <T> T run(ChannelCall<T> call) {
		try (Channel channel = this.connection.createChannel()) {
			return call.call(channel);
		}
		catch (IOException | TimeoutException ex) {
			throw new IllegalStateException("Broker operation failed: " + ex.getMessage(), ex);
		}
	}

	@Override
	public void close() {
		try {
			this.connection.close();
		}
		catch (IOException | RuntimeException ex) {
			// Closing anyway; the broker drops the connection.
		}
	}

	@FunctionalInterface
	private interface ChannelCall<T> {

		T call(Channel channel) throws IOException;

	}

}
