package io.github.tieredretry.reliability.broker;

import java.nio.file.Path;
import java.util.Optional;

import org.testcontainers.DockerClientFactory;

/**
 * Starts the fault run's own broker: a local RabbitMQ node when {@code rabbitmq-server} is installed,
 * else a container when Docker works. There is no third option: the harness restarts its broker and
 * closes all of its connections, so it never touches a broker that it did not start (such as the one
 * on 5672 that developers and other test suites share).
 * <p>
 * {@code -Dreliability.broker=local} or {@code =docker} forces a choice.
 */
public final class HarnessBrokers {

	private HarnessBrokers() {
	}

	/**
	 * Start a broker for the harness.
	 * @param workDirectory where a local node keeps its files
	 * @return the running broker
	 * @throws IllegalStateException when neither RabbitMQ nor Docker is available
	 */
	public static HarnessBroker start(Path workDirectory) {
		String choice = System.getProperty("reliability.broker", "auto");
		Optional<Path> scripts = LocalRabbitNode.findScripts();
		if (!choice.equals("docker") && scripts.isPresent()) {
			return LocalRabbitNode.start(scripts.get(), workDirectory);
		}
		if (!choice.equals("local") && dockerAvailable()) {
			return ContainerRabbitNode.start();
		}
		throw new IllegalStateException("The fault run needs a RabbitMQ node of its own, because it restarts the "
				+ "broker and closes all of its connections: it never uses a shared broker such as the one on "
				+ "localhost:5672. Found neither rabbitmq-server/rabbitmqctl (looked in "
				+ "-Dreliability.rabbitmq-scripts, /usr/lib/rabbitmq/bin, /usr/local/sbin, /opt/rabbitmq/sbin and "
				+ "the PATH) nor a working Docker for Testcontainers" + (choice.equals("auto") ? "" : " (with "
						+ "-Dreliability.broker=" + choice + ")")
				+ ". Install RabbitMQ (e.g. apt-get install -y rabbitmq-server; the harness starts its own node "
				+ "as the current user, on free ports, with its files under target/) or start Docker.");
	}

	private static boolean dockerAvailable() {
		try {
			return DockerClientFactory.instance().isDockerAvailable();
		}
		catch (RuntimeException | LinkageError ex) {
			return false;
		}
	}

}
