package io.github.tieredretry.reliability;

import io.github.tieredretry.testsupport.InvocationRecorder;

import org.springframework.amqp.core.Message;

/**
 * A listener body that follows header {@value #SCRIPT} of each message: {@code ok} succeeds,
 * {@code fail-once} fails on the first delivery only ({@code retry-count} 0), {@code fail} always fails,
 * {@code reject} throws a {@link PermanentFailure} (configured as not retryable).
 */
final class ScriptedListener {

	static final String SCRIPT = "script";

	private final InvocationRecorder deliveries;

	ScriptedListener(InvocationRecorder deliveries) {
		this.deliveries = deliveries;
	}

	void handle(Message message) {
		Object script = message.getMessageProperties().getHeaders().get(SCRIPT);
		String text = String.valueOf(script);
		boolean fail = text.equals("fail") || text.equals("reject")
				|| (text.equals("fail-once") && message.getMessageProperties().getRetryCount() == 0);
		this.deliveries.record(message, !fail);
		if (text.equals("reject")) {
			throw new PermanentFailure("scripted permanent failure");
		}
		if (fail) {
			throw new IllegalStateException("scripted failure");
		}
	}

	/** A failure that is never retried. */
	static class PermanentFailure extends RuntimeException {

		PermanentFailure(String message) {
			super(message);
		}

	}

}
