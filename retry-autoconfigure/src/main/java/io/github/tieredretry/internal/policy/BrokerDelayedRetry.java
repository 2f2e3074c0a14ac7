package io.github.tieredretry.internal.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.github.tieredretry.policy.DurationText;
import io.github.tieredretry.policy.EffectiveRetryPolicy;
import org.jspecify.annotations.Nullable;

/**
 * A quorum queue's delayed retry, RabbitMQ 4.3's way of holding a returned message before
 * it delivers it again: queue arguments {@code x-delayed-retry-type},
 * {@code x-delayed-retry-min} and {@code x-delayed-retry-max} (or the policy keys without
 * {@code x-}). A message given back with {@code basic.reject} (type {@code failed} or
 * {@code all}) waits {@code min(min × x-delivery-count, max)}: the delays grow linearly
 * with the number of failed deliveries, which is the message's retry count.
 * <p>
 * Read as the broker reads it (measured on 4.3.6): a type it does not know, or a minimum
 * that is not a positive integer, leaves delayed retry disabled; a missing or unusable
 * maximum is the minimum.
 *
 * @param type which returns are delayed
 * @param min the delay after the first failed delivery
 * @param max the longest delay
 */
public record BrokerDelayedRetry(Type type, Duration min, Duration max) {

	/** Queue argument of the type. */
	public static final String TYPE_ARGUMENT = "x-delayed-retry-type";

	/** Queue argument of the minimum delay, in milliseconds. */
	public static final String MIN_ARGUMENT = "x-delayed-retry-min";

	/** Queue argument of the maximum delay, in milliseconds. */
	public static final String MAX_ARGUMENT = "x-delayed-retry-max";

	/** Queue argument of a quorum queue's delivery limit. */
	public static final String DELIVERY_LIMIT_ARGUMENT = "x-delivery-limit";

	/** A quorum queue's delivery limit when none is set, from RabbitMQ 4.0. */
	public static final int DEFAULT_DELIVERY_LIMIT = 20;

	/** Which returns the broker delays. */
	public enum Type {

		/** None. */
		DISABLED,

		/** Every return: rejects, nacks, closed channels, consumer timeouts. */
		ALL,

		/** Failed deliveries: rejects, closed channels and connections. */
		FAILED,

		/** Returns that are not failures: nacks, consumer timeouts. */
		RETURNED;

		/**
		 * The value of the argument.
		 * @return e.g. {@code failed}
		 */
		public String value() {
			return name().toLowerCase(Locale.ROOT);
		}

	}

	/**
	 * The delayed retry that queue arguments configure.
	 * @param arguments the queue's arguments
	 * @return the configuration; type {@link Type#DISABLED} when the arguments configure
	 * none
	 */
	public static BrokerDelayedRetry fromQueueArguments(Map<String, ?> arguments) {
		Object typeValue = arguments.get(TYPE_ARGUMENT);
		Type type = Type.DISABLED;
		for (Type candidate : Type.values()) {
			if (typeValue != null && candidate.value().equals(typeValue.toString())) {
				type = candidate;
			}
		}
		long min = positiveMillis(arguments.get(MIN_ARGUMENT));
		if (min <= 0) {
			return new BrokerDelayedRetry(Type.DISABLED, Duration.ZERO, Duration.ZERO);
		}
		long max = positiveMillis(arguments.get(MAX_ARGUMENT));
		return new BrokerDelayedRetry(type, Duration.ofMillis(min), Duration.ofMillis((max > 0) ? max : min));
	}

	private static long positiveMillis(@Nullable Object value) {
		return (value instanceof Integer || value instanceof Long) ? Math.max(0, ((Number) value).longValue()) : 0;
	}

	/**
	 * The delayed retry whose delays are exactly a policy's, if it has one: its delays
	 * must grow linearly from the first ({@code d, 2d, 3d, ...}), up to a cap.
	 * @param policy the policy
	 * @return the configuration, of type {@link Type#FAILED}, or {@code null} when no
	 * configuration produces the policy's delays
	 */
	public static @Nullable BrokerDelayedRetry producing(EffectiveRetryPolicy policy) {
		if (policy.maxRetries() < 1) {
			return null;
		}
		Duration min = policy.delayBeforeRetry(1);
		Duration max = policy.delayBeforeRetry(policy.maxRetries());
		if (min.isZero() || min.toMillis() > Integer.MAX_VALUE || max.toMillis() > Integer.MAX_VALUE
				|| min.toNanos() % 1_000_000 != 0 || max.toNanos() % 1_000_000 != 0) {
			return null;
		}
		BrokerDelayedRetry candidate = new BrokerDelayedRetry(Type.FAILED, min, max);
		return candidate.produces(policy) ? candidate : null;
	}

	/**
	 * The delay before the next delivery of a message rejected for the given time.
	 * @param failedDeliveries its {@code x-delivery-count} after the reject
	 * @return {@code min(min × failedDeliveries, max)}, the minimum for 0
	 */
	public Duration delayAfter(long failedDeliveries) {
		long factor = Math.max(1, failedDeliveries);
		long millis = (this.min.toMillis() > this.max.toMillis() / factor) ? this.max.toMillis()
				: Math.min(this.min.toMillis() * factor, this.max.toMillis());
		return Duration.ofMillis(millis);
	}

	/**
	 * Whether a message given back with {@code basic.reject} waits.
	 * @return whether rejects are delayed
	 */
	public boolean delaysRejects() {
		return this.type == Type.FAILED || this.type == Type.ALL;
	}

	/**
	 * Whether retry {@code n} of the policy is delayed by exactly the policy's delay, for
	 * every retry the policy makes.
	 * @param policy the policy
	 * @return whether the delays are the policy's
	 */
	public boolean produces(EffectiveRetryPolicy policy) {
		if (!delaysRejects()) {
			return false;
		}
		for (int retry = 1; retry <= policy.maxRetries(); retry++) {
			if (!delayAfter(retry).equals(policy.delayBeforeRetry(retry))) {
				return false;
			}
		}
		return true;
	}

	/**
	 * The delays of the first retries, to show next to a policy's.
	 * @param retries how many
	 * @return the delays
	 */
	public List<Duration> delays(int retries) {
		List<Duration> delays = new ArrayList<>();
		for (int retry = 1; retry <= retries; retry++) {
			delays.add(delayAfter(retry));
		}
		return delays;
	}

	/**
	 * The queue arguments that configure this delayed retry.
	 * @return {@code x-delayed-retry-type}, {@code -min} and {@code -max}
	 */
	public Map<String, Object> queueArguments() {
		Map<String, Object> arguments = new LinkedHashMap<>();
		arguments.put(TYPE_ARGUMENT, this.type.value());
		arguments.put(MIN_ARGUMENT, (int) this.min.toMillis());
		arguments.put(MAX_ARGUMENT, (int) this.max.toMillis());
		return arguments;
	}

	@Override
	public String toString() {
		return (this.type == Type.DISABLED) ? "no delayed retry"
				: this.type.value() + " (min " + DurationText.of(this.min) + ", max " + DurationText.of(this.max) + ")";
	}

}
