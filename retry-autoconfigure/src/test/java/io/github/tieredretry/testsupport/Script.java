package io.github.tieredretry.testsupport;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.github.tieredretry.policy.RetryAfterException;

import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.ImmediateAcknowledgeAmqpException;
import org.springframework.amqp.ImmediateRequeueAmqpException;
import org.springframework.amqp.core.Message;

/**
 * Test listeners follow a script carried in header {@value #HEADER} of the message when
 * it has one, otherwise in its body (the header leaves the body free, e.g. for hostile
 * payloads or a body a test compares): {@code ok} succeeds, {@code fail:N} fails the
 * first N invocations of the message, {@code fail-until-retry:N} fails every delivery of
 * the message before its retry N (so a redelivery of the same attempt, after a failed
 * forward or a lost acknowledgement, fails again), {@code always} always fails,
 * {@code reject} throws {@link IllegalArgumentException} (configured as not retryable in
 * tests), {@code ack-now} throws Spring AMQP's {@link ImmediateAcknowledgeAmqpException},
 * {@code requeue-once} its {@link ImmediateRequeueAmqpException} on the first invocation,
 * {@code dont-requeue} its {@link AmqpRejectAndDontRequeueException},
 * {@code stack-overflow} recurses until a {@link StackOverflowError},
 * {@code broken-exception} throws a {@link BrokenException} whose message and string form
 * throw, {@code retry-after:MILLIS} throws a {@link RetryAfterException} of that many
 * milliseconds on the first invocation, then fails plainly before retry 2. Every
 * invocation is recorded with the message's properties.
 */
public final class Script {

	/** The header that carries the script, when the body does not. */
	public static final String HEADER = "script";

	private Script() {
	}

	/**
	 * Record the invocation and throw when the script says so.
	 * @param message the message
	 * @param recorder where invocations are recorded
	 */
	public static void run(Message message, InvocationRecorder recorder) {
		String id = message.getMessageProperties().getMessageId();
		Object header = message.getMessageProperties().getHeaders().get(HEADER);
		String script = (header != null) ? header.toString() : new String(message.getBody(), StandardCharsets.UTF_8);
		int attempt = recorder.count(id) + 1;
		boolean reject = script.equals("reject");
		boolean retryAfter = script.startsWith("retry-after:");
		boolean requeue = script.equals("requeue-once") && attempt == 1;
		boolean fail = reject || requeue || script.equals("always") || script.equals("ack-now")
				|| script.equals("dont-requeue") || script.equals("stack-overflow") || script.equals("broken-exception")
				|| (script.startsWith("fail:") && attempt <= count(script, "fail:"))
				|| (retryAfter && message.getMessageProperties().getRetryCount() < 2)
				|| (script.startsWith("fail-until-retry:")
						&& message.getMessageProperties().getRetryCount() < count(script, "fail-until-retry:"));
		recorder.record(message, !fail);
		if (script.equals("dont-requeue")) {
			throw new AmqpRejectAndDontRequeueException("scripted: do not redeliver");
		}
		if (requeue) {
			throw new ImmediateRequeueAmqpException("scripted: requeue without processing");
		}
		if (script.equals("ack-now")) {
			throw new ImmediateAcknowledgeAmqpException("scripted: acknowledge without processing");
		}
		if (reject) {
			throw new IllegalArgumentException("scripted rejection");
		}
		if (retryAfter && attempt == 1) {
			throw new RetryAfterException(Duration.ofMillis(count(script, "retry-after:")), "scripted: retry later");
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

	private static int count(String script, String word) {
		return Integer.parseInt(script.substring(word.length()).trim());
	}

	/** A listener bug: unbounded recursion. */
	private static int recurse(int depth) {
		return recurse(depth + 1) + 1;
	}

	/**
	 * An exception that cannot describe itself: its message and its string form throw.
	 */
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
