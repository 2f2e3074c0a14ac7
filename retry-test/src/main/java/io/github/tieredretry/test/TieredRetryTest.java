package io.github.tieredretry.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.context.PropertyMapping;

/**
 * Put next to {@code @SpringBootTest} to test the retry behaviour of
 * {@code @RetryableListener}s against a real broker in seconds: short delay tiers
 * ({@code retry.tiers}), default delays ({@code retry.defaults.delays}) without jitter,
 * and a {@link RetryOutcomes} bean to await what happened to a message.
 * <pre class="code">
 * &#64;SpringBootTest
 * &#64;TieredRetryTest
 * class OrderListenerRetryTests {
 *
 *     &#64;Autowired RabbitTemplate rabbit;
 *     &#64;Autowired RetryOutcomes outcomes;
 *
 *     &#64;Test
 *     void declinedPaymentIsParkedAfterItsRetries() {
 *         rabbit.convertAndSend("orders", order, (message) -&gt; withMessageId(message, "order-1"));
 *         MessageParkedEvent parked = outcomes.awaitParked("order-1");
 *         assertThat(parked.retryCount()).isEqualTo(3);
 *     }
 * }
 * </pre> Delays set by a named policy ({@code retry.policies.<name>.delays}) or by the
 * annotation win over the default delays: override a policy's in the test's properties,
 * and keep timing out of annotations that tests must shorten.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ImportAutoConfiguration
@PropertyMapping("retry")
public @interface TieredRetryTest {

	/**
	 * The delay tiers of the test ({@code retry.tiers}). Tier queues are shared by every
	 * application on a virtual host: on a broker that other tests or applications use,
	 * choose tiers of the test's own.
	 * @return the tiers, ascending
	 */
	String[] tiers() default { "100ms", "250ms", "500ms" };

	/**
	 * The default delays of the test ({@code retry.defaults.delays}), before retry 1, 2,
	 * ...; the last one repeats.
	 * @return the delays
	 */
	@PropertyMapping("defaults.delays")
	String[] delays() default { "100ms", "250ms", "500ms" };

	/**
	 * The default jitter of the test ({@code retry.defaults.jitter}): 0 by default, so
	 * that a retry's delay, due time and tier are the same in every run even when the
	 * application's configuration spreads them out. A named policy's jitter wins, like
	 * its delays.
	 * @return the jitter factor, from 0 to 1
	 */
	@PropertyMapping("defaults.jitter")
	double jitter() default 0;

}
