package io.github.tieredretry.testsupport;

import org.springframework.amqp.core.Message;

/**
 * Base of test listener beans: runs each message's {@link Script} and records the
 * invocation.
 */
public abstract class ScriptedListener {

	protected final InvocationRecorder recorder;

	protected ScriptedListener(InvocationRecorder recorder) {
		this.recorder = recorder;
	}

	protected void run(Message message) {
		Script.run(message, this.recorder);
	}

}
