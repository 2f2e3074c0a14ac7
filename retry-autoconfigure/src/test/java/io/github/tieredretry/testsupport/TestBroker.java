package io.github.tieredretry.testsupport;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Locale;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.github.tieredretry.testbrokers.BrokerMatrixSession;
import io.github.tieredretry.testbrokers.ContainerRabbitNode;
import io.github.tieredretry.testbrokers.RabbitMqInstallation;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.rabbitmq.RabbitMQContainer;

/**
 * The RabbitMQ that integration tests run against, resolved once per JVM:
 * <ol>
 * <li>with {@code -Drabbitmq.version=4.3} (the broker matrix), the node of that version
 * that {@link BrokerMatrixSession} started for this JVM;</li>
 * <li>else a Testcontainers {@link RabbitMQContainer} of the newest version the matrix
 * proves when Docker works;</li>
 * <li>otherwise the broker named by {@code spring.rabbitmq.host/port/username/password}
 * (system properties or {@code SPRING_RABBITMQ_*} environment variables), by default
 * {@code 127.0.0.1:5672} with guest/guest.</li>
 * </ol>
 * When there is neither, every integration test fails with a message saying how to get a
 * broker: a test that skipped itself would prove nothing.
 */
public final class TestBroker {

	private static volatile TestBroker instance;

	private final String host;

	private final int port;

	private final String username;

	private final String password;

	private final RabbitMQContainer container;

	private TestBroker(String host, int port, String username, String password, RabbitMQContainer container) {
		this.host = host;
		this.port = port;
		this.username = username;
		this.password = password;
		this.container = container;
	}

	/**
	 * The broker, starting a container on first use when Docker works.
	 * @return the broker
	 * @throws IllegalStateException when no broker is available
	 */
	public static TestBroker get() {
		TestBroker broker = instance;
		if (broker == null) {
			synchronized (TestBroker.class) {
				broker = instance;
				if (broker == null) {
					broker = resolve();
					instance = broker;
				}
			}
		}
		return broker;
	}

	private static TestBroker resolve() {
		if (RabbitMqInstallation.requestedVersion().isEmpty() && dockerAvailable()) {
			RabbitMQContainer container = new RabbitMQContainer(ContainerRabbitNode.image());
			container.start();
			return new TestBroker(container.getHost(), container.getAmqpPort(), container.getAdminUsername(),
					container.getAdminPassword(), container);
		}
		String host = setting("spring.rabbitmq.host", "127.0.0.1");
		int port = Integer.parseInt(setting("spring.rabbitmq.port", "5672"));
		String username = setting("spring.rabbitmq.username", "guest");
		String password = setting("spring.rabbitmq.password", "guest");
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(host, port), 2000);
		}
		catch (IOException ex) {
			throw new IllegalStateException("No RabbitMQ for the integration tests: Docker is not available for "
					+ "Testcontainers, and nothing listens on " + host + ":" + port + " (" + ex.getMessage()
					+ "). Start a broker (rabbitmq-server -detached, or apt-get install -y rabbitmq-server), point "
					+ "SPRING_RABBITMQ_HOST/PORT/USERNAME/PASSWORD at one, or start Docker.", ex);
		}
		return new TestBroker(host, port, username, password, null);
	}

	private static boolean dockerAvailable() {
		try {
			return DockerClientFactory.instance().isDockerAvailable();
		}
		catch (RuntimeException | LinkageError ex) {
			return false;
		}
	}

	private static String setting(String property, String defaultValue) {
		String value = System.getProperty(property);
		if (value == null) {
			value = System.getenv(property.toUpperCase(Locale.ROOT).replace('.', '_'));
		}
		return (value != null && !value.isBlank()) ? value : defaultValue;
	}

	/**
	 * Whether the broker is a Testcontainers container (else a local or configured
	 * broker).
	 * @return whether it runs in a container
	 */
	public boolean isContainer() {
		return this.container != null;
	}

	public RabbitMQContainer container() {
		return this.container;
	}

	public String host() {
		return this.host;
	}

	public int port() {
		return this.port;
	}

	public String username() {
		return this.username;
	}

	public String password() {
		return this.password;
	}

	/**
	 * Spring Boot properties pointing at this broker.
	 * @return {@code key=value} pairs
	 */
	public String[] springProperties() {
		return new String[] { "spring.rabbitmq.host=" + this.host, "spring.rabbitmq.port=" + this.port,
				"spring.rabbitmq.username=" + this.username, "spring.rabbitmq.password=" + this.password };
	}

	/**
	 * A plain AMQP client connection factory for this broker, for tests that publish and
	 * inspect messages without Spring's conversions.
	 * @return a connection factory
	 */
	public ConnectionFactory clientConnectionFactory() {
		ConnectionFactory factory = new ConnectionFactory();
		factory.setHost(this.host);
		factory.setPort(this.port);
		factory.setUsername(this.username);
		factory.setPassword(this.password);
		factory.setAutomaticRecoveryEnabled(false);
		return factory;
	}

	/**
	 * The broker's version, as it announces it on a connection.
	 * @return e.g. {@code 4.3.6}
	 */
	public String version() {
		try (Connection connection = newConnection()) {
			return String.valueOf(connection.getServerProperties().get("version"));
		}
		catch (IOException ex) {
			throw new IllegalStateException("Could not close the connection to the test broker", ex);
		}
	}

	/**
	 * Whether the broker is at least a version.
	 * @param major its major version
	 * @param minor its minor version
	 * @return whether it is that version or later
	 */
	public boolean isAtLeast(int major, int minor) {
		String[] parts = version().split("\\.");
		int actualMajor = Integer.parseInt(parts[0]);
		int actualMinor = (parts.length > 1) ? Integer.parseInt(parts[1]) : 0;
		return (actualMajor != major) ? actualMajor > major : actualMinor >= minor;
	}

	/**
	 * Open a plain AMQP client connection to this broker.
	 * @return a new connection
	 */
	public Connection newConnection() {
		try {
			return clientConnectionFactory().newConnection("tiered-retry-tests");
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not connect to the test broker at " + this.host + ":" + this.port,
					ex);
		}
	}

}
