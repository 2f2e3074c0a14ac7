package io.github.tieredretry.topology;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.tieredretry.annotation.Backend;
import io.github.tieredretry.internal.policy.BrokerDelayedRetry;
import io.github.tieredretry.policy.BackendChoice;
import org.jspecify.annotations.Nullable;

/**
 * Work queues of retryable listeners exist on the broker with other arguments than this
 * start declares, typically after a change of backend: a queue declared for the broker
 * backend (with {@code x-delayed-retry-*}) restarted on the tiers, or a queue declared
 * without them restarted with {@code retry.broker.declare-queue-arguments}. RabbitMQ
 * never changes a queue's arguments, and from 4.3 compares the delayed-retry ones on
 * every declaration. Every such queue is listed with the argument that differs, what the
 * queue has and what this start declares, the listener's backend and why, and commands
 * that the running broker accepts. Found before anything was declared: the application
 * changed nothing.
 */
public class QueueArgumentsConflictException extends IllegalStateException {

	private static final Pattern INEQUIVALENT = Pattern
		.compile("inequivalent arg '([^']*)' for queue '.*' in vhost '.*': received (.*) but current is (.*)$");

	private static final Pattern TYPED_VALUE = Pattern.compile("the value '(.*)' of type '[^']*'");

	private static final Pattern QUOTED_VALUE = Pattern.compile("'(.*)'");

	private final List<Conflict> conflicts;

	private final String virtualHost;

	/**
	 * Create an exception.
	 * @param conflicts every queue that exists with other arguments, at least one
	 * @param virtualHost the virtual host the queues are on
	 */
	public QueueArgumentsConflictException(List<Conflict> conflicts, String virtualHost) {
		super(describe(conflicts, virtualHost) + " " + fix(conflicts, virtualHost));
		if (conflicts.isEmpty()) {
			throw new IllegalArgumentException("A conflict needs at least one queue");
		}
		this.conflicts = List.copyOf(conflicts);
		this.virtualHost = virtualHost;
	}

	/**
	 * What is wrong: which queues differ, how, and why this start declares them so.
	 * @return the problem, in sentences
	 */
	public String getProblem() {
		return describe(this.conflicts, this.virtualHost);
	}

	/**
	 * What to do, with the commands to run.
	 * @return the fix, in sentences and command lines
	 */
	public String getFix() {
		return fix(this.conflicts, this.virtualHost);
	}

	public List<Conflict> getConflicts() {
		return this.conflicts;
	}

	public String getVirtualHost() {
		return this.virtualHost;
	}

	private static String describe(List<Conflict> conflicts, String virtualHost) {
		String nl = System.lineSeparator();
		StringBuilder problem = new StringBuilder();
		problem
			.append((conflicts.size() == 1) ? "Queue '" + conflicts.get(0).queue() + "'" : conflicts.size() + " queues")
			.append(" on virtual host '")
			.append(virtualHost)
			.append("' exist")
			.append((conflicts.size() == 1) ? "s" : "")
			.append(" with other arguments than this application declares, and RabbitMQ never changes the ")
			.append("arguments of an existing queue:");
		for (Conflict conflict : conflicts) {
			problem.append(nl).append("    - ").append(conflict.description());
			for (Consumer consumer : conflict.consumers()) {
				problem.append(nl).append("      ").append(consumer.description()).append('.');
			}
			problem.append(nl)
				.append("      So this application declares the queue with ")
				.append(conflict.declaredArguments())
				.append('.');
		}
		problem.append(nl)
			.append("This application declared nothing: it compares the queues of its retryable listeners with the ")
			.append("broker's before anything declares them.");
		return problem.toString();
	}

	private static String fix(List<Conflict> conflicts, String virtualHost) {
		String nl = System.lineSeparator();
		String vhost = RetryTopologyConflictException.shellWord(virtualHost);
		String names = (conflicts.size() == 1) ? "the queue" : "the queues";
		StringBuilder fix = new StringBuilder();
		fix.append("Either keep ")
			.append(names)
			.append(" as ")
			.append((conflicts.size() == 1) ? "it is" : "they are")
			.append(", and start with the configuration that declared ")
			.append((conflicts.size() == 1) ? "it" : "them");
		String keep = keepHint(conflicts);
		if (keep != null) {
			fix.append(" (").append(keep).append(')');
		}
		fix.append(". `rabbitmqctl list_queues -p ")
			.append(vhost)
			.append(" name arguments` shows the arguments a queue has.")
			.append(nl)
			.append("Or replace ")
			.append(names)
			.append(" by what this application declares (docs/migration.md, ")
			.append(migration(conflicts))
			.append("):")
			.append(nl)
			.append("    1. Stop the producers that publish to ")
			.append(names)
			.append('.')
			.append(nl)
			.append("    2. Let the application that declared ")
			.append((conflicts.size() == 1) ? "it" : "them")
			.append(" consume until `rabbitmqctl list_queues -p ")
			.append(vhost)
			.append(" name messages` shows 0 messages for ")
			.append(names)
			.append('.')
			.append(nl)
			.append("    3. Stop that application. Wait until the same command shows 0 for every retry.delay.* queue ")
			.append("(or for the longest delay of its policy: a retry waiting in a tier comes back to its queue when ")
			.append("it is due), then 5 seconds more (RabbitMQ updates the figures of a quorum queue every 5 ")
			.append("seconds). ")
			.append((conflicts.size() == 1) ? "The queue" : "The queues")
			.append(" must still show 0; else start that application again and go back to step 2.")
			.append(nl)
			.append("    4. Delete ")
			.append(names)
			.append(':');
		boolean quorum = false;
		for (Conflict conflict : conflicts) {
			boolean classic = "classic".equals(conflict.existingType());
			quorum |= !classic;
			fix.append(nl)
				.append("       rabbitmqctl delete_queue -p ")
				.append(vhost)
				.append(classic ? " --if-empty " : " ")
				.append(RetryTopologyConflictException.shellWord(conflict.queue()));
		}
		if (quorum) {
			fix.append(nl)
				.append("       (RabbitMQ refuses the option if-empty for quorum queues: step 3 is the check.)");
		}
		fix.append(nl)
			.append("    5. Start this application: it declares ")
			.append(names)
			.append(" with the arguments above.")
			.append(nl)
			.append("A policy cannot resolve this: it never changes the arguments a queue was declared with, which ")
			.append("RabbitMQ compares on every declaration.");
		return fix.toString();
	}

	private static @Nullable String keepHint(List<Conflict> conflicts) {
		if (conflicts.stream().allMatch(Conflict::removesDelayedRetry)) {
			return "the broker backend's: retry.broker.declare-queue-arguments=true, with the backend and the "
					+ "delays it was declared for";
		}
		if (conflicts.stream().allMatch(Conflict::addsDelayedRetry)) {
			return "retry.broker.declare-queue-arguments=false: the retries then run on the tiers";
		}
		return null;
	}

	private static String migration(List<Conflict> conflicts) {
		if (conflicts.stream().allMatch(Conflict::removesDelayedRetry)) {
			return "\"broker → tiers\"";
		}
		if (conflicts.stream().allMatch(Conflict::addsDelayedRetry)) {
			return "\"tiers → broker\"";
		}
		return "\"broker → tiers\" and \"tiers → broker\"";
	}

	/**
	 * A retryable listener that consumes a queue, and the backend chosen for it.
	 *
	 * @param listener the listener
	 * @param queues the queues it consumes
	 * @param requested the backend its policy asks for
	 * @param choice the backend chosen, and why
	 */
	public record Consumer(String listener, List<String> queues, Backend requested, BackendChoice choice) {

		String description() {
			return this.listener + " (backend " + this.requested.value() + " asked for) would run its retries on the "
					+ this.choice.backend().value() + ": " + this.choice.reason();
		}

	}

	/**
	 * One queue that exists with other arguments.
	 *
	 * @param queue the queue
	 * @param declaredArguments the arguments this application declares it with
	 * @param difference the argument the broker named, or {@code null} when its message
	 * could not be read
	 * @param brokerMessage the broker's refusal
	 * @param consumers the retryable listeners that consume it
	 */
	public record Conflict(String queue, Map<String, Object> declaredArguments, @Nullable Difference difference,
			String brokerMessage, List<Consumer> consumers) {

		/**
		 * The conflict a broker's refusal ({@code PRECONDITION_FAILED - inequivalent arg
		 * ...}) describes.
		 * @param queue the queue
		 * @param declaredArguments the arguments it was declared with
		 * @param brokerMessage the broker's refusal
		 * @param consumers the retryable listeners that consume it
		 * @return the conflict
		 */
		public static Conflict fromBrokerMessage(String queue, Map<String, Object> declaredArguments,
				String brokerMessage, List<Consumer> consumers) {
			Matcher matcher = INEQUIVALENT.matcher(brokerMessage);
			Difference difference = matcher.find()
					? new Difference(matcher.group(1), value(matcher.group(3)), value(matcher.group(2))) : null;
			// Sorted, so that the message reads the same whatever map the application
			// built.
			return new Conflict(queue, Collections.unmodifiableMap(new TreeMap<>(declaredArguments)), difference,
					brokerMessage, List.copyOf(consumers));
		}

		private static @Nullable String value(String text) {
			if (text.equals("none")) {
				return null;
			}
			Matcher typed = TYPED_VALUE.matcher(text);
			if (typed.matches()) {
				return typed.group(1);
			}
			Matcher quoted = QUOTED_VALUE.matcher(text);
			return quoted.matches() ? quoted.group(1) : text;
		}

		/**
		 * The type of the queue on the broker, where it is known.
		 * @return e.g. {@code quorum}, or {@code null}
		 */
		@Nullable String existingType() {
			if (this.difference != null && this.difference.argument().equals("x-queue-type")) {
				return this.difference.existing();
			}
			Object declared = this.declaredArguments.get("x-queue-type");
			return (declared != null && this.difference != null) ? declared.toString() : null;
		}

		boolean removesDelayedRetry() {
			return this.difference != null && this.difference.isDelayedRetry() && this.difference.existing() != null
					&& !this.declaredArguments.containsKey(BrokerDelayedRetry.TYPE_ARGUMENT);
		}

		boolean addsDelayedRetry() {
			return this.difference != null && this.difference.isDelayedRetry() && this.difference.existing() == null
					&& this.declaredArguments.containsKey(BrokerDelayedRetry.TYPE_ARGUMENT);
		}

		String description() {
			if (this.difference == null) {
				return "queue '" + this.queue + "': " + this.brokerMessage;
			}
			return "queue '" + this.queue + "', argument '" + this.difference.argument() + "': the queue has "
					+ quoted(this.difference.existing()) + "; this application declares "
					+ quoted(this.difference.declared());
		}

		private static String quoted(@Nullable String value) {
			return (value != null) ? "'" + value + "'" : "none";
		}

	}

	/**
	 * The argument the broker named as the first that differs.
	 *
	 * @param argument e.g. {@code x-delayed-retry-type}
	 * @param existing its value on the queue, {@code null} for none
	 * @param declared its value in this application's declaration, {@code null} for none
	 */
	public record Difference(String argument, @Nullable String existing, @Nullable String declared) {

		boolean isDelayedRetry() {
			return this.argument.startsWith("x-delayed-retry-")
					|| this.argument.equals(BrokerDelayedRetry.DELIVERY_LIMIT_ARGUMENT);
		}

	}

}
