package io.github.tieredretry.testbrokers;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.testcontainers.containers.Container;
import org.testcontainers.rabbitmq.RabbitMQContainer;

/**
 * The harness's broker in a Testcontainers container, when Docker works. Faults run
 * {@code rabbitmqctl} inside the container: {@code stop_app}/{@code start_app} restart
 * the broker without replacing the container, so its data and its mapped port survive (a
 * new container would get a new port and lose the queues, which is a different
 * experiment).
 */
public final class ContainerRabbitNode implements HarnessBroker {

	/**
	 * The newest broker line that the matrix proves, used when no version is asked for.
	 */
	public static final String NEWEST_PROVEN_VERSION = "4.3";

	private final RabbitMQContainer container;

	private ContainerRabbitNode(RabbitMQContainer container) {
		this.container = container;
	}

	/**
	 * The image of the requested broker version ({@code -Drabbitmq.version}), else of the
	 * newest version the broker matrix proves.
	 * @return e.g. {@code rabbitmq:4.3-management-alpine}
	 */
	public static String image() {
		return "rabbitmq:" + RabbitMqInstallation.requestedVersion().orElse(NEWEST_PROVEN_VERSION)
				+ "-management-alpine";
	}

	public static ContainerRabbitNode start() {
		RabbitMQContainer container = new RabbitMQContainer(image());
		container.start();
		return new ContainerRabbitNode(container);
	}

	/**
	 * The running container.
	 * @return the container
	 */
	public RabbitMQContainer container() {
		return this.container;
	}

	@Override
	public String description() {
		return "container " + this.container.getDockerImageName() + " on " + host() + ":" + port();
	}

	@Override
	public String log() {
		return this.container.getLogs();
	}

	@Override
	public String host() {
		return this.container.getHost();
	}

	@Override
	public int port() {
		return this.container.getAmqpPort();
	}

	@Override
	public String username() {
		return this.container.getAdminUsername();
	}

	@Override
	public String password() {
		return this.container.getAdminPassword();
	}

	@Override
	public void crashAndRestart() {
		throw new UnsupportedOperationException("A broker crash needs a local RabbitMQ node: killing the "
				+ "container's broker process stops the container. Run with rabbitmq-server installed.");
	}

	@Override
	public CommandResult ctl(String... arguments) {
		List<String> command = new ArrayList<>();
		command.add("rabbitmqctl");
		command.addAll(List.of(arguments));
		try {
			Container.ExecResult result = this.container.execInContainer(command.toArray(String[]::new));
			return new CommandResult(String.join(" ", command), result.getExitCode(),
					result.getStdout() + result.getStderr());
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot run " + command + " in the harness container", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while running " + command, ex);
		}
	}

	@Override
	public void close() {
		this.container.stop();
	}

}
