package io.github.tieredretry.internal.headers;

import java.time.Instant;
import java.util.Map;

import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.policy.RetryState;
import org.jspecify.annotations.Nullable;

/**
 * Reads {@code retry-*} header values defensively: they may come from outside (another
 * producer, an operator, a broken client) with any type or value, and must never crash
 * the consumer, loop, or hold a message longer than its policy allows.
 */
public final class RetryHeaderValues {

	private RetryHeaderValues() {
	}

	/**
	 * The retry state of a message for the queue that is consuming it. Retry headers
	 * written for another queue (a message copied with its headers, say) do not count:
	 * the message starts afresh.
	 * @param headers the message headers
	 * @param retryCount the raw {@code retry-count} value (any type, possibly absent)
	 * @param consumerQueue the queue the message was consumed from
	 * @return the state; {@link RetryState#FIRST_DELIVERY} when nothing usable is present
	 */
	public static RetryState readState(Map<String, ?> headers, @Nullable Object retryCount, String consumerQueue) {
		Object queue = headers.get(RetryHeaders.QUEUE);
		if (queue == null || !consumerQueue.equals(queue.toString())) {
			return RetryState.FIRST_DELIVERY;
		}
		return new RetryState(count(retryCount), epochMillis(headers.get(RetryHeaders.FIRST_FAILURE)),
				epochMillis(headers.get(RetryHeaders.DUE)));
	}

	/**
	 * Parse a retry count: a non-negative integral number, or its decimal text. Anything
	 * else is 0.
	 * @param value the raw value
	 * @return the count, never negative
	 */
	public static long count(@Nullable Object value) {
		Long parsed = asLong(value);
		return (parsed != null && parsed > 0) ? parsed : 0;
	}

	/**
	 * Parse an epoch-millisecond timestamp.
	 * @param value the raw value
	 * @return the instant, or {@code null} when absent, negative or not a number
	 */
	public static @Nullable Instant epochMillis(@Nullable Object value) {
		Long parsed = asLong(value);
		return (parsed != null && parsed >= 0) ? Instant.ofEpochMilli(parsed) : null;
	}

	private static @Nullable Long asLong(@Nullable Object value) {
		if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
			return ((Number) value).longValue();
		}
		if (value instanceof Number number) {
			double asDouble = number.doubleValue();
			// (long) saturates; number.longValue() of a huge BigInteger/BigDecimal keeps
			// only the low 64 bits.
			return (Double.isFinite(asDouble) && asDouble == Math.rint(asDouble)) ? (Long) (long) asDouble : null;
		}
		if (value != null) {
			try {
				return Long.parseLong(value.toString().trim());
			}
			catch (NumberFormatException ex) {
				return null;
			}
		}
		return null;
	}

}
