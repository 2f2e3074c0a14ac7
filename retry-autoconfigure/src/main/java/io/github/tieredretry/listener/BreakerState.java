package io.github.tieredretry.listener;

import java.time.Instant;
import java.util.List;
import java.util.Locale;

import io.github.tieredretry.policy.BreakerSettings;
import org.jspecify.annotations.Nullable;

/**
 * Where a listener's circuit breaker stands, as the endpoint, the console, health and
 * metrics show it.
 *
 * @param listener the listener
 * @param queues the queues it consumes
 * @param status closed, open, half-open or forced open
 * @param since when it got there
 * @param resumesAt when an open breaker tries messages again, or {@code null}
 * @param failureRate the failure rate over the latest outcomes, in percent, or
 * {@code null} while there are too few of them
 * @param settings the breaker's settings
 */
public record BreakerState(String listener, List<String> queues, Status status, Instant since,
		@Nullable Instant resumesAt, @Nullable Float failureRate, BreakerSettings settings) {

	/** Where a breaker stands, as the endpoint, health and metrics show it. */
	public enum Status {

		/** Messages go through. */
		CLOSED(0),

		/** Paused: the failure rate reached the threshold. */
		OPEN(1),

		/** Trying a few messages. */
		HALF_OPEN(2),

		/** Paused by an operator until closed. */
		FORCED_OPEN(3);

		private final int gaugeValue;

		Status(int gaugeValue) {
			this.gaugeValue = gaugeValue;
		}

		/**
		 * The value of gauge {@code rabbitmq.retry.breaker.state}.
		 * @return 0 closed, 1 open, 2 half-open, 3 forced open
		 */
		public int gaugeValue() {
			return this.gaugeValue;
		}

		/**
		 * The name shown to operators, e.g. {@code half-open}.
		 * @return the name
		 */
		public String value() {
			return name().toLowerCase(Locale.ROOT).replace('_', '-');
		}

		/**
		 * Whether the listener's consumers are paused.
		 * @return whether they take no new messages
		 */
		public boolean isPaused() {
			return this == OPEN || this == FORCED_OPEN;
		}

	}

}
