package io.github.tieredretry.sample;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.stereotype.Component;

/**
 * A flaky payment provider. Whether a charge succeeds depends on the customer, so the
 * demo is repeatable:
 * <ul>
 * <li>{@code flaky-*} customers hit a timeout on their first two attempts, then
 * succeed;</li>
 * <li>{@code broke-*} customers time out every time until the provider is {@link #heal()
 * healed} (an outage that outlasts every retry; their orders are parked, and replayed
 * once it is over);</li>
 * <li>{@code fraud-*} customers are rejected as fraudulent, which no retry can fix;</li>
 * <li>everyone else is charged at once;</li>
 * <li>during an {@link #startOutage() outage} every charge times out until the provider
 * is healed.</li>
 * </ul>
 */
@Component
public class PaymentGateway {

	private final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();

	private final AtomicBoolean healed = new AtomicBoolean();

	private final AtomicBoolean outage = new AtomicBoolean();

	/**
	 * End the outage that affects {@code broke-*} customers, and any outage started
	 * since.
	 */
	public void heal() {
		this.healed.set(true);
		this.outage.set(false);
	}

	/** Take the whole provider down: every charge times out until {@link #heal()}. */
	public void startOutage() {
		this.outage.set(true);
	}

	/**
	 * Charge an order.
	 * @param order the order
	 * @return the attempt number that succeeded
	 * @throws PaymentTimeoutException when the provider does not answer in time
	 * (retryable)
	 * @throws FraudSuspectedException when the provider refuses the customer (not
	 * retryable)
	 */
	public int charge(Order order) {
		int attempt = this.attempts.computeIfAbsent(order.orderId(), (id) -> new AtomicInteger()).incrementAndGet();
		String customer = order.customer();
		if (customer.startsWith("fraud-")) {
			throw new FraudSuspectedException("Payment provider flagged customer " + customer + " as fraudulent");
		}
		if (this.outage.get()) {
			throw new PaymentTimeoutException("Payment provider is down (attempt " + attempt + ")");
		}
		if (customer.startsWith("broke-") && !this.healed.get()) {
			throw new PaymentTimeoutException(
					"Payment provider timed out charging " + order.amount() + " (attempt " + attempt + ")");
		}
		if (customer.startsWith("flaky-") && attempt <= 2) {
			throw new PaymentTimeoutException("Payment provider timed out (attempt " + attempt + ")");
		}
		return attempt;
	}

	/** The provider did not answer in time: worth retrying later. */
	public static class PaymentTimeoutException extends RuntimeException {

		public PaymentTimeoutException(String message) {
			super(message);
		}

	}

	/** The provider refused the customer: retrying cannot help. */
	public static class FraudSuspectedException extends RuntimeException {

		public FraudSuspectedException(String message) {
			super(message);
		}

	}

}
