package io.github.tieredretry.testbrokers;

import java.nio.file.Path;
import java.util.Optional;

import org.testcontainers.DockerClientFactory;

/**
 * Starts a broker of the harness's own: a local RabbitMQ node of the
 * {@linkplain RabbitMqInstallation requested installation} (the machine's, or the broker
 * matrix's version in its root), else a container when Docker works. There is no third
 * option: the harness restarts its broker and closes all of its connections, so it never
 * touches a broker that it did not start (such as the one on 5672 that developers and
 * other test suites share).
 * <p>
 * {@code -Dreliability.broker=local} or {@code =docker} forces a choice;
 * {@code -Drabbitmq.version=4.3} chooses the version.
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
		Optional<String> version = RabbitMqInstallation.requestedVersion();
		boolean docker = !choice.equals("local") && dockerAvailable();
		if (choice.equals("docker") || (docker && (version.isPresent() || RabbitMqInstallation.machine().isEmpty()))) {
			if (!docker) {
				throw new IllegalStateException("-Dreliability.broker=docker, but Docker does not work here");
			}
			return ContainerRabbitNode.start();
		}
		return LocalRabbitNode.start(RabbitMqInstallation.requested(), workDirectory);
	}

	/**
	 * Start a cluster of local nodes for the harness. Unlike a single node, a cluster
	 * always runs from a local installation: its faults kill and stop individual nodes.
	 * @param workDirectory where the nodes keep their files
	 * @param size how many nodes
	 * @return the running cluster
	 * @throws IllegalStateException when the requested RabbitMQ is not installed
	 */
	public static LocalRabbitCluster startCluster(Path workDirectory, int size) {
		return LocalRabbitCluster.start(RabbitMqInstallation.requested(), workDirectory, size);
	}

	static boolean dockerAvailable() {
		try {
			return DockerClientFactory.instance().isDockerAvailable();
		}
		catch (RuntimeException | LinkageError ex) {
			return false;
		}
	}

}
