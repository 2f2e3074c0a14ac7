package io.github.tieredretry.listener;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * Thrown by a batch {@code @RetryableListener} to say which messages of its batch failed,
 * so that each is retried or parked on its own and the others are acked. Modelled on
 * Spring Kafka's {@code BatchListenerFailedException}, in two forms:
 * <ul>
 * <li><b>Stopped at a failure</b>
 * ({@link #BatchListenerFailedException(String, Throwable, int)}, or naming the failed
 * element of the list): the listener processed every message before it, fully and
 * irreversibly; the message it names failed with the given cause; the messages after it
 * were not attempted, and the starter calls the listener again with them at once (no
 * retry spent).</li>
 * <li><b>Went through the whole batch</b>
 * ({@link #BatchListenerFailedException(String, Map)}): the messages at the given indexes
 * failed, each with its own cause; every other message was processed.</li>
 * </ul>
 * Indexes and elements refer to the list the listener was given in that call, after
 * messages that could not be converted were left out (those are parked as not retryable).
 * Any other exception from a batch listener, or one of these whose index or element is
 * not in the list, fails every message of the batch: each is retried or parked on its
 * own, with its own retry count, headers and tier. Throw it from the listener, or
 * complete its {@code CompletableFuture} or {@code Mono} with it. <pre class="code">
 * &#64;RabbitListener(queues = "orders", batch = "true")
 * &#64;RetryableListener
 * void onOrders(List&lt;Order&gt; orders) {
 *     for (int i = 0; i &lt; orders.size(); i++) {
 *         try {
 *             this.payments.pay(orders.get(i));
 *         }
 *         catch (PaymentException ex) {
 *             throw new BatchListenerFailedException("Order not paid", ex, i);
 *         }
 *     }
 * }
 * </pre>
 */
public class BatchListenerFailedException extends RuntimeException {

	private final Map<Integer, Throwable> failures;

	private final @Nullable Object failedElement;

	private final boolean stoppedAtFailure;

	/**
	 * The listener stopped at the message at {@code index}: the messages before it were
	 * processed, this one failed, the ones after it were not attempted.
	 * @param message what happened
	 * @param cause why the message failed, which the retry policy classifies
	 * @param index its index in the list the listener was given
	 */
	public BatchListenerFailedException(String message, Throwable cause, int index) {
		super(message, cause);
		Assert.notNull(cause, "'cause' must not be null");
		this.failures = Map.of(index, cause);
		this.failedElement = null;
		this.stoppedAtFailure = true;
	}

	/**
	 * The listener stopped at a message, named by the element of the list it was given:
	 * the {@code org.springframework.amqp.core.Message} or the
	 * {@code org.springframework.messaging.Message} itself, or the converted payload
	 * (matched by identity). The messages before it were processed, this one failed, the
	 * ones after it were not attempted.
	 * @param message what happened
	 * @param cause why the message failed, which the retry policy classifies
	 * @param failedElement the element of the list
	 */
	public BatchListenerFailedException(String message, Throwable cause, Object failedElement) {
		super(message, cause);
		Assert.notNull(cause, "'cause' must not be null");
		Assert.notNull(failedElement, "'failedElement' must not be null");
		this.failures = Map.of();
		this.failedElement = failedElement;
		this.stoppedAtFailure = true;
	}

	/**
	 * The listener went through the whole batch: the messages at these indexes failed,
	 * each with its own cause, and every other one was processed.
	 * @param message what happened
	 * @param failures why each failed message failed, by its index in the list the
	 * listener was given
	 */
	public BatchListenerFailedException(String message, Map<Integer, ? extends Throwable> failures) {
		super(message, failures.isEmpty() ? null : failures.values().iterator().next());
		Assert.notEmpty(failures, "'failures' must not be empty");
		this.failures = Collections.unmodifiableMap(new LinkedHashMap<>(failures));
		this.failedElement = null;
		this.stoppedAtFailure = false;
	}

	/**
	 * Why each failed message failed, by its index; empty when the failed message is
	 * named by its {@linkplain #getFailedElement() element}.
	 * @return the failures
	 */
	public Map<Integer, Throwable> getFailures() {
		return this.failures;
	}

	/**
	 * The element of the list that names the failed message, when it was named so.
	 * @return the element, or {@code null}
	 */
	public @Nullable Object getFailedElement() {
		return this.failedElement;
	}

	/**
	 * Whether the listener stopped at the failed message, leaving the messages after it
	 * unattempted; otherwise it went through the whole batch.
	 * @return whether it stopped
	 */
	public boolean isStoppedAtFailure() {
		return this.stoppedAtFailure;
	}

}
