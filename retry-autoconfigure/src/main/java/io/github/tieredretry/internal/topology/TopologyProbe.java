package io.github.tieredretry.internal.topology;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ShutdownSignalException;
import io.github.tieredretry.internal.broker.RealChannels;
import io.github.tieredretry.topology.QueueType;
import io.github.tieredretry.topology.RetryTopologyConflictException.Conflict;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.AmqpIOException;
import org.springframework.amqp.core.Exchange;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;

/**
 * Finds out what the broker has of the retry topology. At startup the topology is
 * declared first, each object with its arguments: that creates what is missing and
 * changes nothing that is equivalent, and only an object that exists with other arguments
 * is refused (406, channel closed), which is then looked at more closely (is the type the
 * whole difference?). Declaring first, rather than asking with passive declarations,
 * leaves no error in the broker's log on a normal first start (a passive declaration of a
 * missing object is a channel error there). Every declaration runs on a channel of its
 * own, so that one refusal cannot hide the next: all conflicts are found at once. The
 * periodic check asks with passive declarations, which only fail for an object that was
 * deleted.
 */
final class TopologyProbe {

	private final ConnectionFactory connectionFactory;

	TopologyProbe(ConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
	}

	String virtualHost() {
		return this.connectionFactory.getVirtualHost();
	}

	/**
	 * Inspect the broker.
	 * @param topology the topology to look for
	 * @return what is missing and what conflicts
	 * @throws AmqpIOException when the broker cannot be asked (connection lost, no
	 * permission)
	 */
	Inspection inspect(RetryTopology topology) {
		Connection connection = this.connectionFactory.createConnection();
		List<String> missing = new ArrayList<>();
		List<Conflict> conflicts = new ArrayList<>();
		for (Exchange exchange : topology.exchanges()) {
			if (!exists(connection, (channel) -> channel.exchangeDeclarePassive(exchange.getName()))) {
				missing.add("exchange " + exchange.getName());
			}
			else {
				checkExchange(connection, exchange, conflicts);
			}
		}
		Map<String, Queue> ofOtherType = queuesOfOtherType(topology);
		for (Queue queue : topology.queues()) {
			if (!exists(connection, (channel) -> channel.queueDeclarePassive(queue.getName()))) {
				missing.add("queue " + queue.getName());
				continue;
			}
			checkQueue(connection, queue, ofOtherType, topology.queueType(), conflicts);
		}
		Queue shared = topology.sharedParkingLot();
		if (shared != null && !exists(connection, (channel) -> channel.queueDeclarePassive(shared.getName()))) {
			missing.add("queue " + shared.getName());
		}
		return new Inspection(missing, conflicts);
	}

	/**
	 * Declare every exchange and queue of the topology, each with its arguments, and say
	 * which exist with other arguments (those are not changed).
	 * @param topology the topology
	 * @return the conflicts, empty when everything was declared
	 * @throws AmqpIOException when the broker cannot be asked (connection lost, no
	 * permission)
	 */
	List<Conflict> declareOrFindConflicts(RetryTopology topology) {
		Connection connection = this.connectionFactory.createConnection();
		List<Conflict> conflicts = new ArrayList<>();
		for (Exchange exchange : topology.exchanges()) {
			checkExchange(connection, exchange, conflicts);
		}
		Map<String, Queue> ofOtherType = queuesOfOtherType(topology);
		for (Queue queue : topology.queues()) {
			checkQueue(connection, queue, ofOtherType, topology.queueType(), conflicts);
		}
		Queue shared = topology.sharedParkingLot();
		if (shared != null) {
			// Declared, not asked for (a passive declaration of a missing queue is an
			// error in the broker's log); one that exists with other arguments will do
			// as it is: another application, or an earlier version, declared it first
			// (Spring's connection factory logs the refusal).
			attempt(connection, declaration(shared));
		}
		return conflicts;
	}

	// Declares the exchange: a refusal means it exists with other arguments.
	private static void checkExchange(Connection connection, Exchange exchange, List<Conflict> conflicts) {
		String refusal = refusal(connection,
				(channel) -> channel.exchangeDeclare(exchange.getName(), exchange.getType(), exchange.isDurable(),
						exchange.isAutoDelete(), exchange.isInternal(), exchange.getArguments()));
		if (refusal != null) {
			conflicts.add(new Conflict("exchange", exchange.getName(), null, refusal));
		}
	}

	// Declares the queue: a refusal means it exists with other arguments.
	private static void checkQueue(Connection connection, Queue queue, Map<String, Queue> ofOtherType,
			QueueType queueType, List<Conflict> conflicts) {
		String refusal = refusal(connection, declaration(queue));
		if (refusal != null) {
			// Equivalent to the other type's declaration? Then the type is the whole
			// difference.
			Queue other = ofOtherType.get(queue.getName());
			QueueType existing = (other != null && refusal(connection, declaration(other)) == null)
					? otherType(queueType) : null;
			conflicts.add(new Conflict("queue", queue.getName(), existing, refusal));
		}
	}

	private static Map<String, Queue> queuesOfOtherType(RetryTopology topology) {
		RetryTopology other = new RetryTopology(topology.tiers(), otherType(topology.queueType()),
				topology.parkingLot());
		return other.queues().stream().collect(Collectors.toMap(Queue::getName, Function.identity()));
	}

	private static QueueType otherType(QueueType type) {
		return (type == QueueType.CLASSIC) ? QueueType.QUORUM : QueueType.CLASSIC;
	}

	private static Operation declaration(Queue queue) {
		return (channel) -> channel.queueDeclare(queue.getName(), queue.isDurable(), queue.isExclusive(),
				queue.isAutoDelete(), queue.getArguments());
	}

	private static boolean exists(Connection connection, Operation passiveDeclaration) {
		AMQP.Channel.Close refused = attempt(connection, passiveDeclaration);
		if (refused != null && refused.getReplyCode() != AMQP.NOT_FOUND) {
			throw cannotInspect(refused);
		}
		return refused == null;
	}

	// Run a declaration that changes nothing when the object's arguments are equivalent.
	// Returns broker's refusal, or null when it accepted
	private static @Nullable String refusal(Connection connection, Operation declaration) {
		AMQP.Channel.Close refused = attempt(connection, declaration);
		if (refused != null && refused.getReplyCode() != AMQP.PRECONDITION_FAILED) {
			throw cannotInspect(refused);
		}
		return (refused != null) ? refused.getReplyText() : null;
	}

	private static AmqpIOException cannotInspect(AMQP.Channel.Close refused) {
		return new AmqpIOException(new IOException("Cannot inspect the retry topology: " + refused.getReplyText()));
	}

	// Run an operation on a channel of its own, closed for good afterwards (a refusal
	// closes it anyway).
	// Returns null on success, else the broker's channel close
	static AMQP.Channel.@Nullable Close attempt(Connection connection, Operation operation) {
		Channel cached = connection.createChannel(false);
		try {
			operation.run(RealChannels.target(cached));
			return null;
		}
		catch (IOException ex) {
			if (ex.getCause() instanceof ShutdownSignalException signal && !signal.isHardError()
					&& signal.getReason() instanceof AMQP.Channel.Close close) {
				return close;
			}
			throw new AmqpIOException(ex);
		}
		finally {
			RealChannels.closeForGood(cached);
		}
	}

	@FunctionalInterface
	interface Operation {

		void run(Channel channel) throws IOException;

	}

	/**
	 * What the broker has of the topology.
	 *
	 * @param missing exchanges and queues that do not exist, e.g.
	 * {@code queue retry.delay.1s}
	 * @param conflicts objects that exist with other arguments
	 */
	record Inspection(List<String> missing, List<Conflict> conflicts) {
	}

}
