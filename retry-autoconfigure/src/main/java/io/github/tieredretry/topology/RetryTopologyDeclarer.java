package io.github.tieredretry.topology;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.AmqpConnectException;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.core.Binding;
import org.springframework.amqp.core.Exchange;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.connection.RabbitUtils;

/**
 * Declares the retry topology explicitly: at startup, so that a conflicting existing queue fails the
 * application with a clear message, and whenever a forward finds part of the topology missing.
 * Declaring is idempotent; the application's {@code RabbitAdmin} also declares the same objects (from
 * the {@link RetryDeclarables} bean) on every new connection.
 */
public final class RetryTopologyDeclarer {

	private static final Log logger = LogFactory.getLog(RetryTopologyDeclarer.class);

	private final RetryTopology topology;

	private final @Nullable AmqpAdmin admin;

	/**
	 * Create a declarer.
	 * @param topology the topology
	 * @param admin the admin to declare with, or {@code null} when the application declares nothing
	 * ({@code spring.rabbitmq.dynamic=false}): the topology must then exist already
	 */
	public RetryTopologyDeclarer(RetryTopology topology, @Nullable AmqpAdmin admin) {
		this.topology = topology;
		this.admin = admin;
	}

	/**
	 * Declare every object of the topology.
	 * @return {@code false} when there is no admin to declare with
	 * @throws RetryTopologyConflictException when a queue or exchange exists with other arguments
	 * @throws AmqpConnectException when the broker cannot be reached
	 */
	public boolean declare() {
		AmqpAdmin amqpAdmin = this.admin;
		if (amqpAdmin == null) {
			return false;
		}
		for (Exchange exchange : this.topology.exchanges()) {
			try {
				amqpAdmin.declareExchange(exchange);
			}
			catch (RuntimeException ex) {
				throw conflictOr(ex);
			}
		}
		for (Queue queue : this.topology.queues()) {
			try {
				amqpAdmin.declareQueue(queue);
			}
			catch (RuntimeException ex) {
				throw conflictOr(ex);
			}
		}
		for (Binding binding : this.topology.bindings()) {
			try {
				amqpAdmin.declareBinding(binding);
			}
			catch (AmqpConnectException ex) {
				throw ex;
			}
			catch (RuntimeException ex) {
				if (!binding.isIgnoreDeclarationExceptions()) {
					throw ex;
				}
				logger.warn("Queue '" + binding.getDestination() + "' could not be bound to '"
						+ binding.getExchange() + "' (" + rootMessage(ex) + "). Until it exists, its retries "
						+ "are parked with reason 'unroutable' when they leave their tier.");
			}
		}
		return true;
	}

	private RuntimeException conflictOr(RuntimeException ex) {
		// The 406 may surface while declaring any object (the admin redeclares everything on a new
		// connection), so the broker's message, which names the object, is the source of truth.
		if (RabbitUtils.isMismatchedQueueArgs(ex) || RabbitUtils.isExchangeDeclarationFailure(ex)) {
			return new RetryTopologyConflictException(rootMessage(ex), this.topology.queueType());
		}
		return ex;
	}

	private static String rootMessage(Throwable ex) {
		Throwable root = ex;
		while (root.getCause() != null && root.getCause() != root) {
			root = root.getCause();
		}
		return String.valueOf(root.getMessage());
	}

}
