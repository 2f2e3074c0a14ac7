package io.github.tieredretry.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Gives a {@code @RabbitListener} non-blocking, tiered retries.
 * <p>
 * When the listener throws, the message is not retried in the consumer thread: it is
 * republished (with publisher confirms) to a delay tier queue whose TTL dead-letters it
 * back to the queue that failed, and the original is acknowledged only after that publish
 * is confirmed. After the last retry, or for failures that can never succeed (for example
 * a payload that cannot be converted), the message is parked in the parking-lot queue
 * with its body and properties untouched.
 * <p>
 * Put it on a {@code @RabbitListener} method, or on a class annotated with
 * {@code @RabbitListener} (it then applies to all of the class's {@code @RabbitHandler}
 * methods). Every attribute left at its default falls back to the named {@link #policy()
 * policy} under {@code retry.policies}, then to {@code retry.defaults}.
 *
 * <pre class="code">
 * &#64;RabbitListener(queues = "orders")
 * &#64;RetryableListener(maxRetries = 4, delays = {"10s", "100s", "1h"})
 * void onOrder(Order order) { ... }
 * </pre>
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface RetryableListener {

	/**
	 * Name of an entry under {@code retry.policies}. Empty means {@code retry.defaults}.
	 * @return the policy name
	 */
	String policy() default "";

	/**
	 * Retries after the first attempt; {@code -1} takes the value from the policy.
	 * @return the number of retries
	 */
	int maxRetries() default -1;

	/**
	 * Delays before each retry, as durations such as {@code "10s"}, {@code "2m"} or
	 * {@code "1h"}: the first is the delay before retry 1, the last one repeats.
	 * Overrides the exponential back-off. Empty takes the delays from the policy. A
	 * number without a unit ({@code "10"}) fails startup: it would be read as
	 * milliseconds where seconds were often meant.
	 * @return the delays
	 */
	String[] delays() default {};

	/**
	 * Spread of each retry's delay, a factor from 0 to 1: the delay is drawn uniformly
	 * between {@code delay × (1 − jitter)} and {@code delay × (1 + jitter)}, so that
	 * messages that fail together are not retried together. {@code 0} keeps delays exact
	 * (also when the policy has jitter); {@code -1} (the default) takes the value from
	 * the policy. Any other value outside 0 to 1 fails startup.
	 * @return the jitter factor, or {@code -1}
	 */
	double jitter() default -1;

	/**
	 * Exception types that are retried, matched through the cause chain. Empty takes them
	 * from the policy; if the policy has none either, every exception is retried.
	 * @return the retryable exception types
	 */
	Class<? extends Throwable>[] retryOn() default {};

	/**
	 * Exception types that are never retried (the message is parked at once), matched
	 * through the cause chain. Wins over {@link #retryOn()}.
	 * @return the non-retryable exception types
	 */
	Class<? extends Throwable>[] noRetryOn() default {};

	/**
	 * Whether the listener has a circuit breaker: while its failures spike (its
	 * downstream is down), its consumers pause instead of running every message through
	 * its retries. Its settings come from the policy
	 * ({@code retry.policies.<name>.breaker.*}, then {@code retry.defaults.breaker.*});
	 * needs {@code io.github.resilience4j:resilience4j-circuitbreaker}.
	 * @return on, off, or as the policy says
	 */
	Breaker breaker() default Breaker.INHERIT;

	/**
	 * Where the listener's failed messages wait for their retry: the delay tiers, or the
	 * listener's own queue, held by RabbitMQ 4.3's delayed retry (no republish, no tier
	 * queue). Overrides {@code retry.policies.<name>.backend} and
	 * {@code retry.defaults.backend}.
	 * @return auto, tiers, broker, or as the policy says
	 */
	Backend backend() default Backend.INHERIT;

}
