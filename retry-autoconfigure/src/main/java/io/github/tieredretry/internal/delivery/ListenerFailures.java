package io.github.tieredretry.internal.delivery;

import org.jspecify.annotations.Nullable;

import org.springframework.amqp.listener.ListenerExecutionFailedException;

/**
 * What a listener threw, read without trusting it: a buggy exception may throw from
 * {@code getCause()}, and an {@link Error} from a listener is usually that listener's
 * bug, not the JVM's end.
 */
public final class ListenerFailures {

	private ListenerFailures() {
	}

	/**
	 * Whether the JVM cannot be trusted to go on after this: such an error is rethrown,
	 * never retried. {@link StackOverflowError} is not among them: the stack has unwound
	 * by the time it is caught, and one message that recurses too deep must not stop its
	 * queue's consumer.
	 * @param failure what was thrown
	 * @return whether to rethrow it
	 */
	static boolean isFatal(Throwable failure) {
		return failure instanceof VirtualMachineError && !(failure instanceof StackOverflowError);
	}

	/**
	 * The cause of a failure, or {@code null} when there is none or asking for it throws.
	 * @param failure the failure
	 * @return its cause
	 */
	static @Nullable Throwable causeOf(Throwable failure) {
		try {
			Throwable cause = failure.getCause();
			return (cause != failure) ? cause : null;
		}
		catch (RuntimeException | LinkageError | StackOverflowError ex) {
			return null;
		}
	}

	/**
	 * The listener's own exception, unwrapped from Spring's
	 * {@link ListenerExecutionFailedException}.
	 * @param failure what the listener adapter threw
	 * @return the listener's exception
	 */
	static Throwable unwrap(Throwable failure) {
		Throwable current = failure;
		while (current instanceof ListenerExecutionFailedException) {
			Throwable cause = causeOf(current);
			if (cause == null) {
				break;
			}
			current = cause;
		}
		return current;
	}

}
