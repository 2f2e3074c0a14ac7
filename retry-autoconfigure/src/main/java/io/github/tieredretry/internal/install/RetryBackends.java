package io.github.tieredretry.internal.install;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

import io.github.tieredretry.annotation.Backend;
import io.github.tieredretry.internal.topology.RetryTopologyInitializer;
import io.github.tieredretry.internal.topology.WorkQueueCheck;
import io.github.tieredretry.listener.ListenerBackend;
import io.github.tieredretry.listener.RetryableListenerConfigurationException;
import io.github.tieredretry.policy.BackendChoice;
import io.github.tieredretry.topology.QueueArgumentsConflictException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.amqp.AmqpException;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.connection.RabbitUtils;
import org.springframework.context.SmartLifecycle;

/**
 * Chooses the backend of every retryable listener when the application first talks to the
 * broker, and says at startup, per listener, which one runs and why. A listener that
 * asked for the broker backend and cannot have it fails startup with the reason and the
 * fix; once the application runs (the broker was unreachable at startup) it runs on the
 * tiers instead, and says so as an error.
 * <p>
 * At startup it chooses before anything is declared, on a connection no admin declares
 * on, and then compares the listeners' queues with the broker's ({@link WorkQueueCheck}):
 * a start that fails, because a backend cannot be had or a queue exists with other
 * arguments, leaves nothing declared that the next start would have to delete.
 */
public final class RetryBackends implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(RetryBackends.class);

	private final ConnectionFactory connectionFactory;

	private final ConnectionFactory inspection;

	private final WorkQueueCheck queueCheck;

	private final List<ListenerBackend> backends = new CopyOnWriteArrayList<>();

	private final AtomicBoolean listening = new AtomicBoolean();

	private volatile boolean running;

	/**
	 * Create the backends.
	 * @param connectionFactory the application's connection factory, whose first
	 * connection chooses when the broker could not be reached at startup
	 * @param inspection the connection factory to choose on at startup: not one an admin
	 * declares on when it connects
	 * @param queueCheck compares the listeners' queues with the broker's at startup
	 */
	public RetryBackends(ConnectionFactory connectionFactory, ConnectionFactory inspection, WorkQueueCheck queueCheck) {
		this.connectionFactory = connectionFactory;
		this.inspection = inspection;
		this.queueCheck = queueCheck;
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
			// Those whose backend depends on the queue arguments the application declares
			// are chosen before anything declares them, on a connection no admin declares
			// on; then their queues are compared with the broker's.
			this.queueCheck
				.check(choose(this.inspection.createConnection(), true, ListenerBackend::choosesFromDeclaredArguments));
			if (this.backends.stream().anyMatch((backend) -> backend.choice() == null)) {
				// The others (the AMQP 1.0 client's) read their queue on the broker: on
				// the
				// application's connection, whose admin declares it first.
				choose(this.connectionFactory.createConnection(), true, (backend) -> true);
			}
		}
		catch (AmqpException ex) {
			if (RabbitUtils.isMismatchedQueueArgs(ex)) {
				// One of the application's other queues, declared by its admin: as the
				// broker names it.
				throw ex;
			}
			// Unreachable: chosen on the first connection, before any listener consumes.
			logger.debug("Retry backends are chosen when RabbitMQ can be reached: " + ex.getMessage());
			if (this.listening.compareAndSet(false, true)) {
				this.connectionFactory
					.addConnectionListener((connection) -> choose(connection, false, (backend) -> true));
			}
		}
	}

	private List<QueueArgumentsConflictException.Consumer> choose(Connection connection, boolean atStartup,
			Predicate<ListenerBackend> which) {
		String version = null;
		List<QueueArgumentsConflictException.Consumer> chosen = new ArrayList<>();
		for (ListenerBackend backend : this.backends) {
			if (backend.choice() != null || !which.test(backend)) {
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
			if (choice.backend() == Backend.TIERS && logger.isInfoEnabled()) {
				// Only now: the broker backend serves its delays exactly.
				backend.tierNotices().forEach(logger::info);
			}
			chosen.add(new QueueArgumentsConflictException.Consumer(backend.listener(), backend.queues(),
					backend.requested(), choice));
		}
		return chosen;
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
		// Before the topology, whose declaration makes the admin declare the
		// application's queues, and the listener containers.
		return RetryTopologyInitializer.PHASE - 1;
	}

}
