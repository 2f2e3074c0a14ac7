package io.github.tieredretry.topology;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.amqp.AmqpConnectException;
import org.springframework.context.SmartLifecycle;

/**
 * Declares the retry topology when the application starts, before any listener container: a queue that
 * exists with conflicting arguments fails startup with a clear message. A broker that cannot be reached
 * does not: the application's {@code RabbitAdmin} declares the topology on the first connection.
 */
public final class RetryTopologyInitializer implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(RetryTopologyInitializer.class);

	/** Before the listener containers (which start in the last phase). */
	public static final int PHASE = Integer.MAX_VALUE - 1000;

	private final RetryTopologyDeclarer declarer;

	private final RetryTopology topology;

	private volatile boolean running;

	public RetryTopologyInitializer(RetryTopologyDeclarer declarer, RetryTopology topology) {
		this.declarer = declarer;
		this.topology = topology;
	}

	@Override
	public void start() {
		if (this.topology.queueType() == QueueType.CLASSIC) {
			// A property choice with a loss window deserves one line where operators look.
			logger.info("Retry tiers are classic queues (retry.queue-type=classic): RabbitMQ dead-letters them at "
					+ "most once, so a retry that leaves its tier while the broker stops or crashes can be lost. "
					+ "Set retry.queue-type=quorum where that matters.");
		}
		try {
			if (!this.declarer.declare()) {
				logger.warn("No AmqpAdmin (spring.rabbitmq.dynamic=false?): the retry topology is not declared. "
						+ "It must exist on the broker: exchanges " + this.topology.exchanges().stream()
							.map((exchange) -> exchange.getName())
							.toList()
						+ ", queues " + this.topology.tierQueueNames() + " and '" + this.topology.parkingLot() + "'.");
			}
		}
		catch (RetryTopologyConflictException ex) {
			throw ex;
		}
		catch (AmqpConnectException ex) {
			logger.warn("RabbitMQ is not reachable at startup (" + ex.getMessage() + "); the retry topology will be "
					+ "declared when the connection is established");
		}
		catch (RuntimeException ex) {
			logger.warn("Could not declare the retry topology at startup; it will be declared again on the next "
					+ "connection and before a forward that finds it missing", ex);
		}
		this.running = true;
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
