package io.github.tieredretry.topology;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Queues or exchanges of the retry topology already exist on the broker with other
 * arguments (for example classic tier queues while {@code retry.queue-type=quorum}).
 * Arguments can never change after declaration, so the application cannot start until the
 * conflicts are resolved. Every conflicting object is listed, with commands that name the
 * virtual host.
 */
public class RetryTopologyConflictException extends IllegalStateException {

	private static final Pattern OBJECT = Pattern.compile("for (queue|exchange) '([^']*)'");

	private static final Pattern SHELL_SAFE = Pattern.compile("[A-Za-z0-9._/:@%+=-]+");

	private final List<Conflict> conflicts;

	private final QueueType configuredType;

	private final String virtualHost;

	private final boolean createdOnlyMissing;

	/**
	 * Create an exception.
	 * @param conflicts every conflicting object, at least one
	 * @param configuredType the configured queue type
	 * @param virtualHost the virtual host the objects are on
	 * @param createdOnlyMissing whether the conflicts were found by the startup check,
	 * which creates only the objects that are missing and changes none that exist
	 */
	public RetryTopologyConflictException(List<Conflict> conflicts, QueueType configuredType, String virtualHost,
			boolean createdOnlyMissing) {
		super(describe(conflicts, configuredType, virtualHost, createdOnlyMissing) + " "
				+ fix(conflicts, configuredType, virtualHost));
		if (conflicts.isEmpty()) {
			throw new IllegalArgumentException("A conflict needs at least one conflicting object");
		}
		this.conflicts = List.copyOf(conflicts);
		this.configuredType = configuredType;
		this.virtualHost = virtualHost;
		this.createdOnlyMissing = createdOnlyMissing;
	}

	/**
	 * What is wrong: which objects conflict, and how.
	 * @return the problem, in sentences
	 */
	public String getProblem() {
		return describe(this.conflicts, this.configuredType, this.virtualHost, this.createdOnlyMissing);
	}

	/**
	 * What to do, with the commands to run.
	 * @return the fix, in sentences and command lines
	 */
	public String getFix() {
		return fix(this.conflicts, this.configuredType, this.virtualHost);
	}

	public List<Conflict> getConflicts() {
		return this.conflicts;
	}

	public QueueType getConfiguredType() {
		return this.configuredType;
	}

	public String getVirtualHost() {
		return this.virtualHost;
	}

	private static String describe(List<Conflict> conflicts, QueueType configuredType, String virtualHost,
			boolean createdOnlyMissing) {
		StringBuilder problem = new StringBuilder();
		problem.append((conflicts.size() == 1) ? "An object" : conflicts.size() + " objects")
			.append(" of the retry topology already exist")
			.append((conflicts.size() == 1) ? "s" : "")
			.append(" on virtual host '")
			.append(virtualHost)
			.append("' with other arguments than this application declares (retry.queue-type=")
			.append(configuredType)
			.append("), and RabbitMQ never changes the arguments of an existing queue or exchange:");
		for (Conflict conflict : conflicts) {
			problem.append(System.lineSeparator()).append("    - ").append(conflict.description());
		}
		if (createdOnlyMissing) {
			problem.append(System.lineSeparator())
				.append("This application changed none of them; of the retry topology it created only what was "
						+ "missing.");
		}
		return problem.toString();
	}

	private static String fix(List<Conflict> conflicts, QueueType configuredType, String virtualHost) {
		String nl = System.lineSeparator();
		List<Conflict> queues = conflicts.stream().filter(Conflict::isQueue).toList();
		List<Conflict> exchanges = conflicts.stream().filter((conflict) -> !conflict.isQueue()).toList();
		StringBuilder fix = new StringBuilder();
		if (!queues.isEmpty()) {
			QueueType existing = queues.get(0).existingType();
			boolean sameOtherType = existing != null && existing != configuredType
					&& queues.stream().allMatch((conflict) -> conflict.existingType() == existing);
			fix.append("The tier queues and the parking lot are shared by every application on virtual host '")
				.append(virtualHost)
				.append("' that uses tiered retries: their messages may be other applications' retries, and all ")
				.append("of those applications must use the same retry.queue-type.");
			if (sameOtherType) {
				fix.append(nl)
					.append("Either keep the existing ")
					.append(existing)
					.append(" queues: set retry.queue-type=")
					.append(existing)
					.append('.')
					.append(nl)
					.append("Or switch to ")
					.append(configuredType)
					.append(" queues:");
			}
			else {
				fix.append(nl)
					.append("Find out who declared these queues. If they are tiered-retry queues to replace:");
			}
			fix.append(" stop every application on the virtual host that uses tiered retries, wait until the ")
				.append("tier queues are empty (each empties within its TTL: its messages go back to their work ")
				.append("queues), replay or move what the parking lot holds, then delete the queues and start ")
				.append("the applications again (docs/migration.md, \"Switching between classic and quorum tiers\"):");
			for (Conflict queue : queues) {
				fix.append(nl).append("    ").append(deleteCommand(virtualHost, queue));
			}
			if (queues.stream().anyMatch((queue) -> queue.existingType() == QueueType.QUORUM)) {
				fix.append(nl)
					.append("(Quorum queues refuse --if-empty: check that `rabbitmqctl list_queues -p ")
					.append(shellWord(virtualHost))
					.append(" name messages` shows them empty first.)");
			}
		}
		for (Conflict exchange : exchanges) {
			fix.append(fix.isEmpty() ? "" : nl)
				.append("The exchange '")
				.append(exchange.name())
				.append("' has another type or other arguments than tiered retries need; it is shared by every ")
				.append("application on the virtual host, so find out who declared it. It holds no messages, but ")
				.append("deleting it (rabbitmqadmin --vhost=")
				.append(shellWord(virtualHost))
				.append(" delete exchange name=")
				.append(shellWord(exchange.name()))
				.append(") also removes its bindings: applications that use tiered retries declare theirs again ")
				.append("when they start.");
		}
		return fix.toString();
	}

	private static String deleteCommand(String virtualHost, Conflict queue) {
		return "rabbitmqctl delete_queue -p " + shellWord(virtualHost)
				+ ((queue.existingType() == QueueType.QUORUM) ? " " : " --if-empty ") + shellWord(queue.name());
	}

	// A word for a command line, quoted where the shell would split or expand it.
	static String shellWord(String word) {
		return SHELL_SAFE.matcher(word).matches() ? word : "'" + word.replace("'", "'\\''") + "'";
	}

	/**
	 * One object that exists with other arguments.
	 *
	 * @param objectType {@code queue} or {@code exchange}
	 * @param name its name
	 * @param existingType for a queue, the type it was found to have when that is the
	 * difference, else {@code null}
	 * @param brokerMessage the broker's refusal, naming the first differing argument
	 */
	public record Conflict(String objectType, String name, @Nullable QueueType existingType, String brokerMessage) {

		/**
		 * The conflict a broker's PRECONDITION_FAILED message describes.
		 * @param brokerMessage the broker's text, naming the object and the differing
		 * argument
		 * @return the conflict
		 */
		public static Conflict fromBrokerMessage(String brokerMessage) {
			Matcher matcher = OBJECT.matcher(brokerMessage);
			return matcher.find() ? new Conflict(matcher.group(1), matcher.group(2), null, brokerMessage)
					: new Conflict("queue", "(see the broker's message)", null, brokerMessage);
		}

		boolean isQueue() {
			return "queue".equals(this.objectType);
		}

		String description() {
			if (this.existingType != null) {
				return this.objectType + " '" + this.name + "' exists as a " + this.existingType + " queue";
			}
			return this.objectType + " '" + this.name + "': " + this.brokerMessage;
		}

	}

}
