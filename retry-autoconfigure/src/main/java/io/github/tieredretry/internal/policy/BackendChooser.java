package io.github.tieredretry.internal.policy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.github.tieredretry.annotation.Backend;
import io.github.tieredretry.policy.BackendChoice;
import io.github.tieredretry.policy.BackendChoice.QueueFacts;
import io.github.tieredretry.policy.DurationText;
import io.github.tieredretry.policy.EffectiveRetryPolicy;
import org.jspecify.annotations.Nullable;

/**
 * Chooses the backend of a listener's retries ({@link BackendChoice}):
 * {@link Backend#BROKER} only where the broker is RabbitMQ 4.3 or later and every queue
 * of the listener is a quorum queue whose delayed retry produces exactly the policy's
 * delays, with a delivery limit that lets every retry happen; the tiers everywhere else.
 */
public final class BackendChooser {

	private BackendChooser() {
	}

	/**
	 * How to leave the broker, for the fix of every problem: where a listener's backend
	 * is set, the annotation first, as the starter reads them.
	 */
	static final String ANOTHER_BACKEND = "set the listener's backend to auto or tiers "
			+ "(@RetryableListener(backend = Backend.AUTO), retry.policies.<name>.backend or retry.defaults.backend)";

	/** The first RabbitMQ version with delayed retry for quorum queues. */
	static final int[] FIRST_VERSION = { 4, 3 };

	/** The first RabbitMQ version the RabbitMQ AMQP 1.0 client can talk to. */
	static final int[] FIRST_AMQP_CLIENT_VERSION = { 4, 0 };

	/**
	 * Choose.
	 * @param requested what the listener's policy asks for
	 * @param policy the listener's policy
	 * @param brokerVersion the broker's version, e.g. {@code 4.3.6}
	 * @param queues the queues the listener consumes
	 * @return the choice
	 */
	public static BackendChoice choose(Backend requested, EffectiveRetryPolicy policy, String brokerVersion,
			List<QueueFacts> queues) {
		if (requested == Backend.TIERS) {
			return tiers("the backend asked for is tiers");
		}
		BrokerDelayedRetry wanted = BrokerDelayedRetry.producing(policy);
		List<String> reasons = new ArrayList<>();
		if (!atLeast(brokerVersion, FIRST_VERSION)) {
			reasons.add("RabbitMQ " + brokerVersion + " has no delayed retry (4.3 or later has)");
		}
		if (policy.maxRetries() < 1) {
			reasons.add("the policy makes no retries");
		}
		else if (policy.jitter() > 0) {
			reasons.add("its delays are drawn at random (jitter " + policy.jitter() + "), and a queue's delayed retry "
					+ "makes fixed delays");
		}
		else if (wanted == null) {
			reasons.add("its delays " + DurationText.of(delays(policy)) + " do not grow linearly from the first "
					+ "(d, 2d, 3d, ... up to a cap), the only delays a queue's delayed retry makes");
		}
		for (QueueFacts queue : queues) {
			String problem = problemWith(queue, policy);
			if (problem != null) {
				reasons.add(problem);
			}
		}
		if (reasons.isEmpty()) {
			BrokerDelayedRetry delayedRetry = BrokerDelayedRetry.fromQueueArguments(queues.get(0).arguments());
			return new BackendChoice(Backend.BROKER, "RabbitMQ " + brokerVersion
					+ " holds each retry in its queue (delayed retry " + delayedRetry + ", the policy's delays)", null,
					null);
		}
		return cannotHold(requested, String.join("; ", reasons), fix(wanted, policy));
	}

	/**
	 * Choose for a listener of the AMQP 1.0 client, which can give each message back to
	 * its queue with its own delivery time (a {@code modified} outcome with
	 * {@code x-opt-delivery-time}): on RabbitMQ 4.3 or later a quorum queue holds it
	 * until then, for any delay, jitter included, exactly, and without counting the
	 * return. Before RabbitMQ 4.0 such a listener cannot consume at all: that is a
	 * problem whatever was asked for.
	 * @param requested what the listener's policy asks for
	 * @param brokerVersion the broker's version
	 * @param queue the queue the listener consumes
	 * @param queueType its type as the broker reports it ({@code quorum},
	 * {@code classic}, {@code stream}), or {@code null} when it cannot be read
	 * @return the choice
	 */
	public static BackendChoice chooseForDeliveryTime(Backend requested, String brokerVersion, String queue,
			@Nullable String queueType) {
		if (!atLeast(brokerVersion, FIRST_AMQP_CLIENT_VERSION)) {
			// Before 4.0 the listener could not even consume: say so before it tries.
			String problem = "its listener container uses the RabbitMQ AMQP 1.0 client, which needs RabbitMQ 4.0 or "
					+ "later, and the broker is RabbitMQ " + brokerVersion;
			return new BackendChoice(Backend.TIERS, problem, problem,
					"Use RabbitMQ 4.0 or later, or give this listener an AMQP 0-9-1 container factory "
							+ "(Spring Boot's default).");
		}
		if (requested == Backend.TIERS) {
			return tiers("the backend asked for is tiers");
		}
		String reason = null;
		if (!atLeast(brokerVersion, FIRST_VERSION)) {
			reason = "RabbitMQ " + brokerVersion + " does not honour a delivery time (4.3 or later does)";
		}
		else if (!"quorum".equals(queueType)) {
			reason = (queueType != null)
					? "queue '" + queue + "' is a " + queueType
							+ " queue, and only quorum queues honour a delivery time"
					: "the type of queue '" + queue + "' could not be read (only quorum queues honour a delivery time)";
		}
		if (reason == null) {
			return new BackendChoice(Backend.BROKER,
					"RabbitMQ " + brokerVersion + " holds each retry in queue '" + queue
							+ "' until the delivery time the starter gives it (AMQP 1.0), the policy's delay exactly",
					null, null);
		}
		return cannotHold(requested, reason,
				"Use RabbitMQ 4.3 or later and a quorum queue, or " + ANOTHER_BACKEND + ".");
	}

	// The broker cannot hold the retries: auto runs the tiers, broker is a problem.
	private static BackendChoice cannotHold(Backend requested, String reason, String fix) {
		if (requested == Backend.AUTO) {
			return tiers("the backend asked for is auto and the broker cannot hold its retries: " + reason);
		}
		return new BackendChoice(Backend.TIERS, "the broker cannot hold its retries: " + reason,
				"the backend asked for is broker, but the broker cannot hold its retries: " + reason, fix);
	}

	private static @Nullable String problemWith(QueueFacts queue, EffectiveRetryPolicy policy) {
		if (queue.arguments() == null) {
			return "the arguments of queue '" + queue.name() + "' cannot be seen (the application does not "
					+ "declare it)";
		}
		Map<String, ?> arguments = queue.arguments();
		if (!"quorum".equals(String.valueOf(arguments.get("x-queue-type")))) {
			return "queue '" + queue.name() + "' is not a quorum queue";
		}
		BrokerDelayedRetry delayedRetry = BrokerDelayedRetry.fromQueueArguments(arguments);
		if (delayedRetry.type() == BrokerDelayedRetry.Type.DISABLED) {
			return "queue '" + queue.name() + "' has no delayed retry (no x-delayed-retry-type and -min arguments)";
		}
		if (!delayedRetry.delaysRejects()) {
			return "queue '" + queue.name() + "' has delayed retry " + delayedRetry + ", which delays no reject";
		}
		if (!delayedRetry.produces(policy)) {
			return "queue '" + queue.name() + "' delays retries by "
					+ DurationText.of(delayedRetry.delays(Math.min(policy.maxRetries(), 5)))
					+ ((policy.maxRetries() > 5) ? "..." : "") + " (" + delayedRetry + "), not by the policy's "
					+ DurationText.of(delays(policy));
		}
		long limit = deliveryLimit(arguments);
		if (limit >= 0 && limit < policy.maxRetries() + 1L) {
			return "queue '" + queue.name() + "' has a delivery limit of " + limit + ", so the broker would drop "
					+ "or dead-letter a message before its " + policy.maxRetries() + " retries are done";
		}
		return null;
	}

	/**
	 * A queue's delivery limit as its arguments set it.
	 * @param arguments the arguments
	 * @return the limit, the default from RabbitMQ 4.0 when none is set, or {@code -1}
	 * for none
	 */
	static long deliveryLimit(Map<String, ?> arguments) {
		Object limit = arguments.get(BrokerDelayedRetry.DELIVERY_LIMIT_ARGUMENT);
		if (limit instanceof Number number) {
			return (number.longValue() < 0) ? -1 : number.longValue();
		}
		return BrokerDelayedRetry.DEFAULT_DELIVERY_LIMIT;
	}

	private static String fix(@Nullable BrokerDelayedRetry wanted, EffectiveRetryPolicy policy) {
		if (policy.jitter() > 0) {
			return "Set the policy's jitter to 0 (the broker makes fixed delays), or " + ANOTHER_BACKEND + ".";
		}
		if (wanted == null) {
			return "Give the policy linear delays (such as delays: 2s, 4s, 6s, or a single delay), or "
					+ ANOTHER_BACKEND + ".";
		}
		String arguments = wanted.queueArguments() + " and " + BrokerDelayedRetry.DELIVERY_LIMIT_ARGUMENT
				+ " of at least " + (policy.maxRetries() + 1);
		// No policy: its delivery limit cannot raise the argument's, the starter reads
		// only arguments, and a queue that exists refuses a declaration that adds them.
		return "On RabbitMQ 4.3 or later, declare each queue as a quorum queue with arguments " + arguments
				+ " (retry.broker.declare-queue-arguments=true adds them to the application's Queue beans). A queue "
				+ "that exists keeps the arguments it was declared with and refuses a declaration with others "
				+ "(PRECONDITION_FAILED), so drain and delete it and let the application declare it again "
				+ "(docs/migration.md, \"tiers → broker\"); a policy cannot stand in for the arguments, as clients "
				+ "cannot see policies. Or " + ANOTHER_BACKEND + ".";
	}

	private static List<java.time.Duration> delays(EffectiveRetryPolicy policy) {
		List<java.time.Duration> delays = new ArrayList<>();
		for (int retry = 1; retry <= Math.min(policy.maxRetries(), 5); retry++) {
			delays.add(policy.delayBeforeRetry(retry));
		}
		return delays;
	}

	/**
	 * Whether a broker can hold retries at all: delayed retry for quorum queues, and a
	 * delivery time on a message an AMQP 1.0 consumer returns.
	 * @param brokerVersion the broker's version
	 * @return whether it is RabbitMQ 4.3 or later
	 */
	public static boolean canHoldRetries(String brokerVersion) {
		return atLeast(brokerVersion, FIRST_VERSION);
	}

	private static BackendChoice tiers(String reason) {
		return new BackendChoice(Backend.TIERS, reason, null, null);
	}

	/**
	 * Whether a version is at least another.
	 * @param version e.g. {@code 4.3.6}, {@code 3.10.8}
	 * @param atLeast major and minor
	 * @return whether it is; {@code false} for a version that cannot be read
	 */
	static boolean atLeast(String version, int[] atLeast) {
		String[] parts = version.split("[.+-]");
		try {
			int major = Integer.parseInt(parts[0]);
			int minor = (parts.length > 1) ? Integer.parseInt(parts[1]) : 0;
			return (major != atLeast[0]) ? major > atLeast[0] : minor >= atLeast[1];
		}
		catch (NumberFormatException ex) {
			return false;
		}
	}

}
