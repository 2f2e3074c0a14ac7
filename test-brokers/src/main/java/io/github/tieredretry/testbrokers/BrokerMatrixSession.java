package io.github.tieredretry.testbrokers;

import java.nio.file.Path;
import java.util.Optional;

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
 * Registered as a JUnit Platform {@link LauncherSessionListener}, so that every module's
 * tests, the sample application's included, follow the same choice without code of their
 * own.
 */
public final class BrokerMatrixSession implements LauncherSessionListener {

	private static final String PORT = "spring.rabbitmq.port";

	private HarnessBroker broker;

	@Override
	public void launcherSessionOpened(LauncherSession session) {
		Optional<String> version = RabbitMqInstallation.requestedVersion();
		if (version.isEmpty() || System.getProperty(PORT) != null) {
			return;
		}
		this.broker = HarnessBrokers.start(Path.of(System.getProperty("rabbitmq.work-dir", "target/rabbitmq")));
		System.setProperty("spring.rabbitmq.host", this.broker.host());
		System.setProperty(PORT, String.valueOf(this.broker.port()));
		System.setProperty("spring.rabbitmq.username", this.broker.username());
		System.setProperty("spring.rabbitmq.password", this.broker.password());
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

}
