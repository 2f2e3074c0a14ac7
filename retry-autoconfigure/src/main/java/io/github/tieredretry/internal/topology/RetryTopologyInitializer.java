package io.github.tieredretry.internal.topology;

import java.util.concurrent.atomic.AtomicBoolean;

import io.github.tieredretry.topology.QueueType;
import io.github.tieredretry.topology.RetryTopologyConflictException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.amqp.AmqpConnectException;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.connection.RabbitUtils;
import org.springframework.context.SmartLifecycle;

/**
 * Declares the retry topology when the application starts, before any listener container:
 * queues that exist with conflicting arguments fail startup with a clear message, and
 * nothing is declared. A broker that cannot be reached does not fail startup: the
 * topology is checked and declared when the application's first connection is
 * established.
 */
public final class RetryTopologyInitializer implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(RetryTopologyInitializer.class);

	/** Before the listener containers (which start in the last phase). */
	public static final int PHASE = Integer.MAX_VALUE - 1000;

	private final RetryTopologyDeclarer declarer;

	private final RetryTopology topology;

	private final ConnectionFactory connectionFactory;

	private final AtomicBoolean listening = new AtomicBoolean();

	private volatile boolean running;

	/**
	 * Create the initializer.
	 * @param declarer checks and declares the topology
	 * @param topology the topology
	 * @param connectionFactory the application's connection factory, whose first
	 * connection declares the topology when the broker could not be reached at startup
	 */
	public RetryTopologyInitializer(RetryTopologyDeclarer declarer, RetryTopology topology,
			ConnectionFactory connectionFactory) {
		this.declarer = declarer;
		this.topology = topology;
		this.connectionFactory = connectionFactory;
	}

	@Override
	public void start() {
		if (this.topology.queueType() == QueueType.CLASSIC) {
			// A property choice with a loss window deserves one line where operators
			// look.
			logger.info("Retry tiers are classic queues (retry.queue-type=classic): RabbitMQ dead-letters them at "
					+ "most once, so a retry that leaves its tier while the broker stops or crashes can be lost. "
					+ "Set retry.queue-type=quorum where that matters.");
		}
		try {
			if (!this.declarer.declare()) {
				logger.warn("No AmqpAdmin (spring.rabbitmq.dynamic=false?): the retry topology is not declared. "
						+ "It must exist on the broker: exchanges "
						+ this.topology.exchanges().stream().map((exchange) -> exchange.getName()).toList()
						+ ", queues " + this.topology.tierQueueNames() + " and '" + this.topology.parkingLot() + "'.");
			}
		}
		catch (RetryTopologyConflictException ex) {
			throw ex;
		}
		catch (AmqpConnectException ex) {
			logger.warn("RabbitMQ is not reachable at startup (" + ex.getMessage() + "); the retry topology will be "
					+ "checked and declared when the connection is established");
			declareOnNextConnection();
		}
		catch (RuntimeException ex) {
			if (RabbitUtils.isMismatchedQueueArgs(ex)) {
				// One of the application's own queues, which its admin declares on the
				// connection that declaring the topology opened: as the broker names it.
				throw ex;
			}
			logger.warn("Could not declare the retry topology at startup; it will be declared again on the next "
					+ "connection and before a forward that finds it missing", ex);
			declareOnNextConnection();
		}
		this.running = true;
	}

	private void declareOnNextConnection() {
		if (this.listening.compareAndSet(false, true)) {
			this.connectionFactory.addConnectionListener(this::connected);
		}
	}

	private void connected(Connection connection) {
		if (this.declarer.isChecked()) {
			return;
		}
		try {
			this.declarer.declare();
		}
		catch (RetryTopologyConflictException ex) {
			// Too late to stop the application: say it loudly. Nothing is declared, and
			// forwards fail (the messages stay in their queues) until the conflict is
			// resolved.
			logger.error("The retry topology cannot be declared. " + ex.getMessage());
		}
		catch (RuntimeException ex) {
			logger.warn("Could not declare the retry topology on the new connection; it will be declared before a "
					+ "forward that finds it missing: " + ex.getMessage());
		}
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
		return PHASE;
	}

}
