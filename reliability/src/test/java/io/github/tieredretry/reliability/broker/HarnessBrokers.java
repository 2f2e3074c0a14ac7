package io.github.tieredretry.reliability.broker;

import java.nio.file.Path;
import java.util.Optional;

import org.testcontainers.DockerClientFactory;

/**
 * Starts the fault run's own broker: a local RabbitMQ node when {@code rabbitmq-server}
 * is installed, else a container when Docker works. There is no third option: the harness
 * restarts its broker and closes all of its connections, so it never touches a broker
 * that it did not start (such as the one on 5672 that developers and other test suites
 * share).
 * <p>
 * {@code -Dreliability.broker=local} or {@code =docker} forces a choice.
 */
public final class HarnessBrokers {

	private static final String SCRIPTS_SEARCHED = "looked in -Dreliability.rabbitmq-scripts, /usr/lib/rabbitmq/bin, "
			+ "/usr/local/sbin, /opt/rabbitmq/sbin and the PATH";

	private static final String INSTALL = "Install RabbitMQ (e.g. apt-get install -y rabbitmq-server; the "
			+ "harness starts its own nodes as the current user, on free ports, with their files under target/)";

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
				+ "localhost:5672. Found neither rabbitmq-server/rabbitmqctl (" + SCRIPTS_SEARCHED
				+ ") nor a working Docker for Testcontainers"
				+ (choice.equals("auto") ? "" : " (with " + "-Dreliability.broker=" + choice + ")") + ". " + INSTALL
				+ " or start Docker.");
	}

	/**
	 * Start a cluster of local nodes for the harness. Unlike a single node, a cluster
	 * always runs from the local {@code rabbitmq-server}: its faults kill and stop
	 * individual nodes.
	 * @param workDirectory where the nodes keep their files
	 * @param size how many nodes
	 * @return the running cluster
	 * @throws IllegalStateException when RabbitMQ is not installed
	 */
	public static LocalRabbitCluster startCluster(Path workDirectory, int size) {
		Path scripts = LocalRabbitNode.findScripts()
			.orElseThrow(() -> new IllegalStateException("The cluster fault run starts " + size + " RabbitMQ nodes "
					+ "of its own on loopback and never uses a shared broker, but found no "
					+ "rabbitmq-server/rabbitmqctl (" + SCRIPTS_SEARCHED + "). " + INSTALL + "."));
		return LocalRabbitCluster.start(scripts, workDirectory, size);
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
