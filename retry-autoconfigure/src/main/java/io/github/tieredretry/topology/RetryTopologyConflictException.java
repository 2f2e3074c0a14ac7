package io.github.tieredretry.topology;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A queue or exchange of the retry topology already exists on the broker with other arguments (for
 * example a classic tier queue while {@code retry.queue-type=quorum}). Arguments can never change
 * after declaration, so the application cannot start until the conflict is resolved.
 */
public class RetryTopologyConflictException extends IllegalStateException {

	private static final Pattern OBJECT = Pattern.compile("for (queue|exchange) '([^']*)'");

	private final String objectType;

	private final String objectName;

	private final String brokerMessage;

	/**
	 * Create an exception from the broker's PRECONDITION_FAILED message.
	 * @param brokerMessage the broker's text, naming the object and the differing argument
	 * @param configuredType the configured queue type
	 */
	public RetryTopologyConflictException(String brokerMessage, QueueType configuredType) {
		this(brokerMessage, configuredType, OBJECT.matcher(brokerMessage));
	}

	private RetryTopologyConflictException(String brokerMessage, QueueType configuredType, Matcher matcher) {
		this(brokerMessage, configuredType, matcher.find() ? matcher.group(1) : "queue",
				matcher.find(0) ? matcher.group(2) : "(see the broker's message)");
	}

	private RetryTopologyConflictException(String brokerMessage, QueueType configuredType, String objectType,
			String objectName) {
		super("The " + objectType + " '" + objectName + "' already exists on the broker with other arguments than "
				+ "this application declares (retry.queue-type=" + configuredType.name().toLowerCase() + "): "
				+ brokerMessage + ". Fix: " + fix(objectType, objectName));
		this.objectType = objectType;
		this.objectName = objectName;
		this.brokerMessage = brokerMessage;
	}

	private static String fix(String objectType, String objectName) {
		if ("queue".equals(objectType)) {
			return "let the queue drain (or move its messages), delete it (rabbitmqctl delete_queue " + objectName
					+ ") and restart; or set retry.queue-type to match the existing queue.";
		}
		return "delete the exchange (management UI, or rabbitmqadmin delete exchange name=" + objectName
				+ ") and restart; it holds no messages.";
	}

	public String getObjectType() {
		return this.objectType;
	}

	public String getObjectName() {
		return this.objectName;
	}

	public String getBrokerMessage() {
		return this.brokerMessage;
	}

}
