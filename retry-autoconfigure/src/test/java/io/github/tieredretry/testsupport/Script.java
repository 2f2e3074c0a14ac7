package io.github.tieredretry.testsupport;

import java.nio.charset.StandardCharsets;

import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.ImmediateAcknowledgeAmqpException;
import org.springframework.amqp.core.Message;

/**
 * Test listeners follow a script carried in the message body: {@code ok} succeeds, {@code fail:N}
 * fails the first N invocations, {@code always} always fails, {@code reject} throws
 * {@link IllegalArgumentException} (configured as not retryable in tests), {@code ack-now} throws Spring
 * AMQP's {@link ImmediateAcknowledgeAmqpException}, {@code dont-requeue} its
 * {@link AmqpRejectAndDontRequeueException}, {@code stack-overflow} recurses until a {@link StackOverflowError},
 * {@code broken-exception} throws a {@link BrokenException} whose message and string form throw.
 */
public final class Script {

	private Script() {
	}

	/**
	 * Record the invocation and throw when the script says so.
	 * @param message the message
	 * @param recorder where invocations are recorded
	 */
	public static void run(Message message, InvocationRecorder recorder) {
		String id = message.getMessageProperties().getMessageId();
		String script = new String(message.getBody(), StandardCharsets.UTF_8);
		int attempt = recorder.count(id) + 1;
		boolean reject = script.equals("reject");
		boolean fail = reject || script.equals("always") || script.equals("ack-now")
				|| script.equals("dont-requeue") || script.equals("stack-overflow")
				|| script.equals("broken-exception")
				|| (script.startsWith("fail:") && attempt <= Integer.parseInt(script.substring(5).trim()));
		recorder.record(id, message.getMessageProperties().getRetryCount(), !fail);
		if (script.equals("dont-requeue")) {
			throw new AmqpRejectAndDontRequeueException("scripted: do not redeliver");
		}
		if (script.equals("ack-now")) {
			throw new ImmediateAcknowledgeAmqpException("scripted: acknowledge without processing");
		}
		if (reject) {
			throw new IllegalArgumentException("scripted rejection");
		}
		if (script.equals("stack-overflow")) {
			recurse(0);
		}
		if (script.equals("broken-exception")) {
			throw new BrokenException();
		}
		if (fail) {
			throw new IllegalStateException("scripted failure " + attempt);
		}
	}

	/** A listener bug: unbounded recursion. */
	private static int recurse(int depth) {
		return recurse(depth + 1) + 1;
	}

	/** An exception that cannot describe itself: its message and its string form throw. */
	public static final class BrokenException extends RuntimeException {

		@Override
		public String getMessage() {
			throw new UnsupportedOperationException("no message for you");
		}

		@Override
		public String getLocalizedMessage() {
			throw new UnsupportedOperationException("no localized message either");
		}

		@Override
		public String toString() {
			throw new UnsupportedOperationException("no string form");
		}

	}

}
