package io.github.tieredretry.listener;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.tieredretry.policy.BackendChoice;
import io.github.tieredretry.policy.RetryBackend;
import io.github.tieredretry.topology.RetryTopologyInitializer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.amqp.AmqpException;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Chooses the backend of every retryable listener when the application first talks to the
 * broker, and says at startup, per listener, which one runs and why. A listener that
 * asked for the broker backend and cannot have it fails startup with the reason and the
 * fix; once the application runs (the broker was unreachable at startup) it runs on the
 * tiers instead, and says so as an error.
 */
public final class RetryBackends implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(RetryBackends.class);

	private final ConnectionFactory connectionFactory;

	private final List<ListenerBackend> backends = new CopyOnWriteArrayList<>();

	private final AtomicBoolean listening = new AtomicBoolean();

	private volatile boolean running;

	public RetryBackends(ConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
	}

	void register(ListenerBackend backend) {
		this.backends.add(backend);
	}

	/**
	 * The listeners' backends.
	 * @return one per retryable listener
	 */
	public List<ListenerBackend> backends() {
		return List.copyOf(this.backends);
	}

	@Override
	public void start() {
		this.running = true;
		try {
			choose(this.connectionFactory.createConnection(), true);
		}
		catch (AmqpException ex) {
			// Unreachable: chosen on the first connection, before any listener consumes.
			logger.debug("Retry backends are chosen when RabbitMQ can be reached: " + ex.getMessage());
			if (this.listening.compareAndSet(false, true)) {
				this.connectionFactory.addConnectionListener((connection) -> choose(connection, false));
			}
		}
	}

	private void choose(Connection connection, boolean atStartup) {
		String version = null;
		for (ListenerBackend backend : this.backends) {
			if (backend.choice() != null) {
				continue;
			}
			version = (version != null) ? version : brokerVersion(connection);
			BackendChoice choice = backend.choose(version);
			if (choice.problem() != null) {
				if (atStartup) {
					throw new RetryableListenerConfigurationException(backend.listener(), choice.problem(),
							String.valueOf(choice.fix()));
				}
				logger.error("Retries of " + backend.listener() + " run on the tiers: " + choice.problem() + ". "
						+ choice.fix());
			}
			else if (logger.isInfoEnabled()) {
				logger.info("Retries of " + backend.listener() + " run on the " + choice.backend().value() + ": "
						+ choice.reason());
			}
			if (choice.backend() == RetryBackend.TIERS && logger.isInfoEnabled()) {
				// Only now: the broker backend serves its delays exactly.
				backend.tierNotices().forEach(logger::info);
			}
		}
	}

	private static String brokerVersion(Connection connection) {
		Object version = connection.getDelegate().getServerProperties().get("version");
		return (version != null) ? version.toString() : "unknown";
	}

	@Override
	public void stop() {
		this.running = false;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		// With the topology, before the listener containers.
		return RetryTopologyInitializer.PHASE;
	}

}
