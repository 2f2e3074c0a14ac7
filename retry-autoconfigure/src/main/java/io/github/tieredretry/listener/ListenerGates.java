package io.github.tieredretry.listener;

import java.util.List;

import io.github.tieredretry.policy.BreakerSettings;

/**
 * Creates the {@link ListenerGate} of each retryable listener from its breaker settings.
 */
public interface ListenerGates {

	/** No listener has a circuit breaker. */
	ListenerGates NONE = (listener, queues, settings) -> ListenerGate.ALWAYS_OPEN;

	/**
	 * The gate of a listener.
	 * @param listener the listener's name
	 * @param queues the queues it consumes
	 * @param settings its breaker settings
	 * @return its gate ({@link ListenerGate#ALWAYS_OPEN} without a breaker)
	 */
	ListenerGate gateFor(String listener, List<String> queues, BreakerSettings settings);

	/** The application stops: consumers waiting at a gate give their messages back. */
	default void stopping() {
	}

}
