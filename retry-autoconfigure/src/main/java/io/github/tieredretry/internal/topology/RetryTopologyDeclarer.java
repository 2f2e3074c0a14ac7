package io.github.tieredretry.internal.topology;

import java.util.List;

import io.github.tieredretry.topology.RetryTopologyConflictException;
import io.github.tieredretry.topology.RetryTopologyConflictException.Conflict;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.AmqpConnectException;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.core.Binding;
import org.springframework.amqp.core.Exchange;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.connection.RabbitUtils;

/**
 * Declares the retry topology explicitly: at startup, so that conflicting existing queues
 * fail the application with a clear message, and whenever a forward finds part of the
 * topology missing.
 * <p>
 * It declares every queue and exchange with its arguments first, each on a channel of its
 * own: what is missing is created, what is equivalent is left as it is, and every object
 * that exists with other arguments is refused and reported, all at once (and left as it
 * is). Declaring is idempotent; once a check has passed, the application's
 * {@code RabbitAdmin} also declares the same objects (from the {@link RetryDeclarables}
 * bean) on every new connection, and the bindings are declared.
 */
public final class RetryTopologyDeclarer {

	private static final Log logger = LogFactory.getLog(RetryTopologyDeclarer.class);

	private final RetryTopology topology;

	private final @Nullable AmqpAdmin admin;

	private final TopologyProbe probe;

	private volatile boolean checked;

	/**
	 * Create a declarer.
	 * @param topology the topology
	 * @param admin the admin to declare with, or {@code null} when the application
	 * declares nothing ({@code spring.rabbitmq.dynamic=false}): the topology must then
	 * exist already
	 * @param inspection the connection to inspect the broker on, to the admin's virtual
	 * host; not one the admin declares on, so that inspecting cannot make the admin
	 * declare anything
	 */
	public RetryTopologyDeclarer(RetryTopology topology, @Nullable AmqpAdmin admin, ConnectionFactory inspection) {
		this.topology = topology;
		this.admin = admin;
		this.probe = new TopologyProbe(inspection);
	}

	/**
	 * Declare every object of the topology, after checking that none exists with other
	 * arguments.
	 * @return {@code false} when there is no admin to declare with
	 * @throws RetryTopologyConflictException listing every queue and exchange that exists
	 * with other arguments
	 * @throws AmqpConnectException when the broker cannot be reached
	 */
	public boolean declare() {
		AmqpAdmin amqpAdmin = this.admin;
		if (amqpAdmin == null) {
			return false;
		}
		List<Conflict> conflicts = this.probe.declareOrFindConflicts(this.topology);
		if (!conflicts.isEmpty()) {
			throw new RetryTopologyConflictException(conflicts, this.topology.queueType(), this.probe.virtualHost(),
					true);
		}
		this.checked = true;
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
				logger.warn("Queue '" + binding.getDestination() + "' could not be bound to '" + binding.getExchange()
						+ "' (" + rootMessage(ex) + "). Until it exists, its retries "
						+ "are parked with reason 'unroutable' when they leave their tier.");
			}
		}
		for (Binding legacy : this.topology.legacyBindings()) {
			// Bound straight to retry.unroutable by an earlier version, a parking lot
			// would
			// receive a copy of every application's unroutable retries.
			try {
				amqpAdmin.removeBinding(legacy);
			}
			catch (AmqpConnectException ex) {
				throw ex;
			}
			catch (RuntimeException ex) {
				logger.warn("Could not remove the binding of '" + legacy.getDestination() + "' to '"
						+ legacy.getExchange() + "' made by an earlier version (" + rootMessage(ex)
						+ "); it receives a copy of every unroutable retry on this virtual host until it is removed.");
			}
		}
		return true;
	}

	/**
	 * The exchanges and queues of the topology that do not exist on the broker; declares
	 * nothing.
	 * @return e.g. {@code queue retry.delay.1s}; empty when all exist
	 */
	public List<String> missing() {
		return this.probe.inspect(this.topology).missing();
	}

	/**
	 * Whether a check found no conflict, so that the topology may be declared on every
	 * new connection.
	 * @return whether the topology has been checked
	 */
	public boolean isChecked() {
		return this.checked;
	}

	private RuntimeException conflictOr(RuntimeException ex) {
		// Something changed since the check (the admin redeclares everything on a new
		// connection), so the broker's message, which names the object, is the source of
		// truth.
		if (RabbitUtils.isMismatchedQueueArgs(ex) || RabbitUtils.isExchangeDeclarationFailure(ex)) {
			Conflict conflict = Conflict.fromBrokerMessage(rootMessage(ex));
			// The admin declares the application's queues on its first connection too:
			// one of those is not the retry topology's to explain.
			if (isOfTheTopology(conflict.name())) {
				return new RetryTopologyConflictException(List.of(conflict), this.topology.queueType(),
						this.probe.virtualHost(), false);
			}
		}
		return ex;
	}

	private boolean isOfTheTopology(String name) {
		return this.topology.queues().stream().anyMatch((queue) -> queue.getName().equals(name))
				|| this.topology.exchanges().stream().anyMatch((exchange) -> exchange.getName().equals(name));
	}

	private static String rootMessage(Throwable ex) {
		Throwable root = ex;
		while (root.getCause() != null && root.getCause() != root) {
			root = root.getCause();
		}
		return String.valueOf(root.getMessage());
	}

}
