package io.github.tieredretry.testbrokers;

import java.nio.file.Path;
import java.util.Optional;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Runs a test JVM's integration tests against the broker version the build asked for
 * ({@code -Drabbitmq.version=4.3}): starts one node of that version for the JVM when the
 * tests begin, points {@code spring.rabbitmq.host/port/username/password} (system
 * properties, which Spring Boot and {@code TestBroker} read) at it, and stops it when
 * they end. Without the property it does nothing: the tests use the broker at
 * {@code spring.rabbitmq.*}, by default {@code localhost:5672}.
 * <p>
 * A version asked for is the version the tests talk to, or the session fails before any
 * test runs: with {@code -Dspring.rabbitmq.port} set it starts no node and uses the
 * broker there, which must announce that version; a node it started must too. Otherwise
 * every test written as "on 4.3 this, before it that" would take its older-broker branch
 * and pass, proving nothing about the version asked for.
 * <p>
 * Registered as a JUnit Platform {@link LauncherSessionListener}, so that every module's
 * tests, the sample application's included, follow the same choice without code of their
 * own.
 */
public final class BrokerMatrixSession implements LauncherSessionListener {

	private static final String HOST = "spring.rabbitmq.host";

	private static final String PORT = "spring.rabbitmq.port";

	private static final String USERNAME = "spring.rabbitmq.username";

	private static final String PASSWORD = "spring.rabbitmq.password";

	private HarnessBroker broker;

	@Override
	public void launcherSessionOpened(LauncherSession session) {
		Optional<String> version = RabbitMqInstallation.requestedVersion();
		if (version.isEmpty()) {
			return;
		}
		String port = System.getProperty(PORT);
		if (port != null) {
			String host = System.getProperty(HOST, "127.0.0.1");
			String where = host + ":" + port;
			requireVersion(version.get(),
					announcedVersion(host, Integer.parseInt(port.strip()), System.getProperty(USERNAME, "guest"),
							System.getProperty(PASSWORD, "guest"), where),
					"the broker at " + where + ": -D" + PORT + "=" + port + " points the tests at it instead of "
							+ "a node of their own. Leave " + PORT + " unset for the matrix, or point it at a "
							+ "RabbitMQ " + version.get() + ".x");
			System.out.println("Broker matrix: tests run against RabbitMQ " + version.get() + " at " + where + " (-D"
					+ PORT + ")");
			return;
		}
		this.broker = HarnessBrokers.start(Path.of(System.getProperty("rabbitmq.work-dir", "target/rabbitmq")));
		try {
			requireVersion(version.get(),
					announcedVersion(this.broker.host(), this.broker.port(), this.broker.username(),
							this.broker.password(), this.broker.description()),
					this.broker.description() + ", the node started for the matrix");
		}
		catch (RuntimeException ex) {
			launcherSessionClosed(session);
			throw ex;
		}
		System.setProperty(HOST, this.broker.host());
		System.setProperty(PORT, String.valueOf(this.broker.port()));
		System.setProperty(USERNAME, this.broker.username());
		System.setProperty(PASSWORD, this.broker.password());
		System.out
			.println("Broker matrix: tests run against RabbitMQ " + version.get() + ", " + this.broker.description());
	}

	@Override
	public void launcherSessionClosed(LauncherSession session) {
		if (this.broker != null) {
			this.broker.close();
			this.broker = null;
		}
	}

	/**
	 * Refuse a broker that is not of the version line asked for.
	 * @param requested the line asked for, e.g. {@code 4.3}
	 * @param announced the version the broker announces, e.g. {@code 3.10.8}
	 * @param broker which broker, and why the tests talk to it
	 * @throws IllegalStateException when the versions differ
	 */
	static void requireVersion(String requested, String announced, String broker) {
		if (!announced.equals(requested) && !announced.startsWith(requested + ".")) {
			throw new IllegalStateException("Broker matrix: -D" + RabbitMqInstallation.VERSION_PROPERTY + "="
					+ requested + " asks for RabbitMQ " + requested + ".x, but the tests would talk to RabbitMQ "
					+ announced + ", " + broker + ". Every test that asserts what " + requested
					+ " does would take the branch of another version and prove nothing about " + requested + ".");
		}
	}

	private static String announcedVersion(String host, int port, String username, String password, String where) {
		ConnectionFactory factory = new ConnectionFactory();
		factory.setHost(host);
		factory.setPort(port);
		factory.setUsername(username);
		factory.setPassword(password);
		factory.setAutomaticRecoveryEnabled(false);
		factory.setConnectionTimeout(5000);
		try (Connection connection = factory.newConnection("tiered-retry-broker-matrix")) {
			return String.valueOf(connection.getServerProperties().get("version"));
		}
		catch (Exception ex) {
			throw new IllegalStateException("Broker matrix: -D" + RabbitMqInstallation.VERSION_PROPERTY
					+ " asks for a version, and the broker its tests would use (" + where
					+ ") cannot be asked for its own: " + ex, ex);
		}
	}

}
