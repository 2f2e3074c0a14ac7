package io.github.tieredretry.listener;

import io.github.tieredretry.policy.RetryAfter;
import org.jspecify.annotations.Nullable;

/**
 * Reads from a listener's failure when its message may be retried: the
 * {@code Retry-After} header of an HTTP 429 or 503 from a downstream, the reset time of a
 * rate limit. The answer replaces the policy's delay for that retry ({@link RetryAfter}
 * says how it is bounded).
 * <p>
 * Declare one or more as beans; for every retryable failure of every
 * {@code @RetryableListener}, a {@link io.github.tieredretry.policy.RetryAfterException}
 * in the failure's cause chain is asked first, then the resolvers in
 * {@link org.springframework.core.annotation.Order order}, and the first answer that is
 * not {@code null} decides. A resolver runs on the listener's consumer thread: keep it
 * fast and free of I/O. If it throws, the failure is logged and the policy's delay
 * applies.
 */
@FunctionalInterface
public interface RetryAfterResolver {

	/**
	 * When a failed message may be retried.
	 * @param listener the listener that failed
	 * @param failure what the listener threw (unwrapped from Spring AMQP's
	 * {@code ListenerExecutionFailedException})
	 * @return when to retry, or {@code null} to leave it to the next resolver and finally
	 * the policy
	 */
	@Nullable RetryAfter retryAfter(RetryableListenerInfo listener, Throwable failure);

}
