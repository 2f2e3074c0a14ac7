package io.github.tieredretry.testbrokers;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import com.rabbitmq.client.Address;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;

/**
 * A RabbitMQ node that belongs to the fault run alone: the harness restarts it and closes
 * all of its connections, which it must never do to a broker that anyone else uses.
 */
public interface HarnessBroker extends AutoCloseable {

	/**
	 * A short description for the report, e.g.
	 * {@code local node tiered-retry-harness-42@localhost}.
	 * @return the description
	 */
	String description();

	String host();

	int port();

	String username();

	String password();

	/**
	 * Every address a client may connect to: one for a single node, each node's for a
	 * cluster.
	 * @return the addresses
	 */
	default List<Address> addresses() {
		return List.of(new Address(host(), port()));
	}

	/**
	 * The addresses as Spring Boot's {@code spring.rabbitmq.addresses} takes them.
	 * @return e.g. {@code 127.0.0.1:41001,127.0.0.1:41002}
	 */
	default String addressList() {
		return addresses().stream()
			.map((address) -> address.getHost() + ":" + address.getPort())
			.collect(Collectors.joining(","));
	}

	/**
	 * Run {@code rabbitmqctl} against this node, and this node only.
	 * @param arguments the command and its arguments
	 * @return the result
	 */
	CommandResult ctl(String... arguments);

	/**
	 * Create a virtual host (one per run, so that classic and quorum tiers of the same
	 * name can coexist) and give the harness user full permissions on it.
	 * @param vhost the virtual host
	 */
	default void createVirtualHost(String vhost) {
		ctl("add_vhost", vhost).requireSuccess();
		ctl("set_permissions", "-p", vhost, username(), ".*", ".*", ".*").requireSuccess();
	}

	/**
	 * Close every client connection of a virtual host
	 * ({@code rabbitmqctl close_all_connections}).
	 * @param vhost the virtual host
	 * @param reason the reason the clients are told
	 */
	default void closeAllConnections(String vhost, String reason) {
		ctl("close_all_connections", "-p", vhost, reason).requireSuccess();
	}

	/**
	 * Restart the RabbitMQ application ({@code rabbitmqctl stop_app}, then
	 * {@code start_app}) and wait until it accepts connections again. Durable queues and
	 * persistent messages survive.
	 */
	default void restartApplication() {
		ctl("stop_app").requireSuccess();
		ctl("start_app").requireSuccess();
		ctl("await_startup").requireSuccess();
	}

	/**
	 * Kill the broker without a clean shutdown (SIGKILL: nothing flushed, nothing handed
	 * over) and start it again, like a crashed node coming back.
	 * @throws UnsupportedOperationException when this broker cannot be crashed
	 */
	void crashAndRestart();

	/**
	 * Messages (ready and unacknowledged) per queue of a virtual host.
	 * @param vhost the virtual host
	 * @return queue name to message count
	 */
	default Map<String, Long> queueDepths(String vhost) {
		String output = ctl("list_queues", "-p", vhost, "name", "messages", "--no-table-headers", "--quiet")
			.requireSuccess()
			.output();
		Map<String, Long> depths = new LinkedHashMap<>();
		for (String line : output.split("\n")) {
			String[] columns = line.strip().split("\\s+");
			if (columns.length == 2 && columns[1].matches("\\d+")) {
				depths.put(columns[0], Long.parseLong(columns[1]));
			}
		}
		return depths;
	}

	/**
	 * A plain AMQP client connection factory for a virtual host, without automatic
	 * recovery; connect with {@link #connect}, which tries every address.
	 * @param vhost the virtual host
	 * @return the factory
	 */
	default ConnectionFactory connectionFactory(String vhost) {
		ConnectionFactory factory = new ConnectionFactory();
		factory.setHost(host());
		factory.setPort(port());
		factory.setUsername(username());
		factory.setPassword(password());
		factory.setVirtualHost(vhost);
		factory.setAutomaticRecoveryEnabled(false);
		factory.setConnectionTimeout(5000);
		return factory;
	}

	/**
	 * Open a plain AMQP client connection.
	 * @param vhost the virtual host
	 * @param name the connection's name, shown by the broker
	 * @return the connection
	 */
	default Connection connect(String vhost, String name) {
		try {
			// The client tries the addresses in random order: with a cluster, any running
			// node will do.
			return connectionFactory(vhost).newConnection(addresses(), name);
		}
		catch (Exception ex) {
			throw new IllegalStateException("Cannot connect to the harness broker at " + addressList() + " (vhost "
					+ vhost + "): " + ex.getMessage(), ex);
		}
	}

	/**
	 * What the broker has logged so far.
	 * @return the log's text
	 */
	String log();

	/** Stop the node and release everything it holds. */
	@Override
	void close();

}
