package io.github.tieredretry.internal.topology;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.topology.QueueArgumentsConflictException;
import io.github.tieredretry.topology.QueueArgumentsConflictException.Conflict;
import io.github.tieredretry.topology.QueueArgumentsConflictException.Consumer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.Declarable;
import org.springframework.amqp.core.DeclarableCustomizer;
import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.beans.factory.ListableBeanFactory;

/**
 * Compares the work queues of retryable listeners, as the application declares them
 * ({@link Queue} beans, with the delayed-retry arguments that
 * {@code retry.broker.declare-queue-arguments} added for the chosen backend), with the
 * queues on the broker, once the backends are chosen and before anything declares them. A
 * queue that exists with other arguments fails startup with a
 * {@link QueueArgumentsConflictException} instead of the admin's first refusal, after the
 * admin had declared whatever came before it.
 * <p>
 * Each queue is declared with the application's arguments, on a channel of its own, of a
 * connection no admin declares on: RabbitMQ accepts that only when an existing queue's
 * arguments are equivalent, and then changes nothing; a queue that does not exist yet is
 * created as the admin would create it right after (a passive declaration first would
 * make the broker log an error on every first start). A queue the application asks admins
 * not to declare is only looked for, passively.
 */
public final class WorkQueueCheck {

	private static final Log logger = LogFactory.getLog(WorkQueueCheck.class);

	private final ConnectionFactory inspection;

	private final ListableBeanFactory beans;

	/**
	 * Create a check.
	 * @param inspection the connection to inspect the broker on, to the application's
	 * virtual host: not one an admin declares on, so that inspecting cannot make it
	 * declare anything
	 * @param beans the application's beans, where its queues are
	 */
	public WorkQueueCheck(ConnectionFactory inspection, ListableBeanFactory beans) {
		this.inspection = inspection;
		this.beans = beans;
	}

	/**
	 * Compare the queues of these listeners that the application declares with the
	 * broker's.
	 * @param consumers the retryable listeners, their queues and their backends
	 * @throws QueueArgumentsConflictException listing every queue that exists with other
	 * arguments
	 * @throws org.springframework.amqp.AmqpException when the broker cannot be asked
	 */
	public void check(List<Consumer> consumers) {
		Map<String, List<Consumer>> byQueue = new LinkedHashMap<>();
		for (Consumer consumer : consumers) {
			for (String queue : consumer.queues()) {
				byQueue.computeIfAbsent(queue, (name) -> new ArrayList<>()).add(consumer);
			}
		}
		Connection connection = null;
		List<Conflict> conflicts = new ArrayList<>();
		for (Map.Entry<String, List<Consumer>> entry : byQueue.entrySet()) {
			Queue queue = declared(entry.getKey());
			// An exclusive queue belongs to one connection: nobody else's can be there.
			if (queue == null || queue.isExclusive()) {
				continue;
			}
			connection = (connection != null) ? connection : this.inspection.createConnection();
			String refusal = refusal(connection, queue);
			if (refusal != null) {
				conflicts
					.add(Conflict.fromBrokerMessage(queue.getName(), queue.getArguments(), refusal, entry.getValue()));
			}
		}
		if (!conflicts.isEmpty()) {
			throw new QueueArgumentsConflictException(conflicts, this.inspection.getVirtualHost());
		}
	}

	// The broker's refusal of the application's declaration of a queue that exists, else
	// null.
	private static @Nullable String refusal(Connection connection, Queue queue) {
		if (!queue.shouldDeclare()) {
			AMQP.Channel.Close missing = TopologyProbe.attempt(connection,
					(channel) -> channel.queueDeclarePassive(queue.getName()));
			if (missing != null) {
				logger.debug("Queue '" + queue.getName() + "' cannot be looked at: " + missing.getReplyText());
				return null;
			}
		}
		AMQP.Channel.Close refused = TopologyProbe.attempt(connection,
				(channel) -> channel.queueDeclare(queue.getName(), queue.isDurable(), queue.isExclusive(),
						queue.isAutoDelete(), queue.getArguments()));
		if (refused == null) {
			return null;
		}
		if (refused.getReplyCode() != AMQP.PRECONDITION_FAILED) {
			// Not a difference of arguments (no permission to declare, say): the admin
			// will say what it is.
			logger.debug("Queue '" + queue.getName() + "' cannot be compared: " + refused.getReplyText());
			return null;
		}
		return refused.getReplyText();
	}

	// The queue as the admin would declare it.
	private @Nullable Queue declared(String name) {
		Stream<Queue> queues = Stream.concat(this.beans.getBeansOfType(Queue.class, false, false).values().stream(),
				this.beans.getBeansOfType(Declarables.class, false, false)
					.values()
					.stream()
					.flatMap((declarables) -> declarables.getDeclarablesByType(Queue.class).stream()));
		Queue queue = queues.filter((candidate) -> candidate.getName().equals(name)).findFirst().orElse(null);
		if (queue == null) {
			return null;
		}
		Declarable customized = queue;
		for (DeclarableCustomizer customizer : this.beans.getBeansOfType(DeclarableCustomizer.class, false, false)
			.values()) {
			customized = customizer.apply(customized);
		}
		return (customized instanceof Queue customizedQueue) ? customizedQueue : queue;
	}

}
