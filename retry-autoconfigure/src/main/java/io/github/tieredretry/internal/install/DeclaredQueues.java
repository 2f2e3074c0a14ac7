package io.github.tieredretry.internal.install;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;

import io.github.tieredretry.annotation.Backend;
import io.github.tieredretry.internal.policy.BrokerDelayedRetry;
import io.github.tieredretry.policy.BackendChoice;
import io.github.tieredretry.policy.EffectiveRetryPolicy;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.Queue;
import org.springframework.beans.factory.ListableBeanFactory;

/**
 * The work queues that the application declares as beans ({@link Queue},
 * {@link Declarables}): their arguments say whether RabbitMQ 4.3 can hold a listener's
 * retries. With {@code retry.broker.declare-queue-arguments}, the quorum queues of
 * listeners that may run on the broker backend get the delayed-retry arguments that make
 * their policy's delays, before they are declared.
 */
public final class DeclaredQueues {

	/** Declares nothing: every queue's arguments are unknown. */
	public static final DeclaredQueues NONE = new DeclaredQueues(null, false);

	private static final Log logger = LogFactory.getLog(DeclaredQueues.class);

	private final @Nullable ListableBeanFactory beans;

	private final boolean declareArguments;

	/**
	 * Look queues up among the application's beans.
	 * @param beans the application's beans
	 * @param declareArguments whether to add the delayed-retry arguments where a listener
	 * may run on the broker backend
	 */
	public DeclaredQueues(@Nullable ListableBeanFactory beans, boolean declareArguments) {
		this.beans = beans;
		this.declareArguments = declareArguments;
	}

	/**
	 * What is known of a queue that a retryable listener consumes, after adding the
	 * delayed-retry arguments where asked to.
	 * @param name the queue
	 * @param listener the listener, for the log
	 * @param policy its policy
	 * @param requested the backend it asks for
	 * @return the facts; no arguments when the application does not declare the queue
	 */
	BackendChoice.QueueFacts facts(String name, String listener, EffectiveRetryPolicy policy, Backend requested) {
		Queue queue = find(name);
		if (queue == null) {
			return new BackendChoice.QueueFacts(name, null);
		}
		Map<String, Object> arguments = queue.getArguments();
		if (this.declareArguments && requested != Backend.TIERS
				&& "quorum".equals(String.valueOf(arguments.get("x-queue-type")))
				&& !arguments.containsKey(BrokerDelayedRetry.TYPE_ARGUMENT)) {
			BrokerDelayedRetry wanted = BrokerDelayedRetry.producing(policy);
			if (wanted != null) {
				Map<String, Object> added = new LinkedHashMap<>(wanted.queueArguments());
				long limit = deliveryLimit(arguments);
				if (limit >= 0 && limit < policy.maxRetries() + 1L) {
					// Room for every retry, and for a few deliveries that a crash or a
					// lost connection spends.
					added.put(BrokerDelayedRetry.DELIVERY_LIMIT_ARGUMENT, policy.maxRetries() + 5);
				}
				arguments.putAll(added);
				logger.info("Queue '" + name + "' of " + listener + " is declared with " + added
						+ " (retry.broker.declare-queue-arguments), so that RabbitMQ 4.3 or later can hold its "
						+ "retries");
			}
		}
		return new BackendChoice.QueueFacts(name, Collections.unmodifiableMap(new LinkedHashMap<>(arguments)));
	}

	private static long deliveryLimit(Map<String, Object> arguments) {
		Object limit = arguments.get(BrokerDelayedRetry.DELIVERY_LIMIT_ARGUMENT);
		return (limit instanceof Number number) ? number.longValue() : BrokerDelayedRetry.DEFAULT_DELIVERY_LIMIT;
	}

	private @Nullable Queue find(String name) {
		if (this.beans == null) {
			return null;
		}
		Stream<Queue> declared = Stream.concat(this.beans.getBeansOfType(Queue.class, false, false).values().stream(),
				this.beans.getBeansOfType(Declarables.class, false, false)
					.values()
					.stream()
					.flatMap((declarables) -> declarables.getDeclarablesByType(Queue.class).stream()));
		return declared.filter((queue) -> Objects.equals(queue.getActualName(), name)).findFirst().orElse(null);
	}

}
