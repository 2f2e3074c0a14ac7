package io.github.tieredretry.listener;

import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

import io.github.tieredretry.policy.BreakerSettings;

/**
 * Creates the {@link ListenerGate} of each retryable listener from its breaker settings.
 */
public interface ListenerGates {

	/**
	 * Without Resilience4j: no listener may have a circuit breaker, and one that asks for
	 * it fails startup saying what to add.
	 */
	ListenerGates WITHOUT_BREAKERS = (listener, queues, settings) -> {
		if (settings.enabled()) {
			throw new RetryableListenerConfigurationException(listener,
					"it has a circuit breaker, but Resilience4j is not on the class path",
					"Add io.github.resilience4j:resilience4j-circuitbreaker to the application's dependencies, or "
							+ "switch the breaker off (@RetryableListener(breaker = Breaker.OFF), or "
							+ "retry.policies.<name>.breaker.enabled=false or retry.defaults.breaker.enabled=false, "
							+ "whichever turned it on).");
		}
		return ListenerGate.ALWAYS_OPEN;
	};

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

	/**
	 * The circuit breakers of the listeners that have one.
	 * @return their states
	 */
	default List<BreakerState> breakers() {
		return List.of();
	}

	/**
	 * An operator pauses a listener until its breaker is closed again.
	 * @param listener the listener's name
	 * @return whether the listener has a breaker
	 */
	default boolean open(String listener) {
		return false;
	}

	/**
	 * An operator resumes a listener now.
	 * @param listener the listener's name
	 * @return whether the listener has a breaker
	 */
	default boolean close(String listener) {
		return false;
	}

	/**
	 * Be told whenever a listener gets a breaker (metrics register a gauge for each).
	 * @param listener called with the breaker's listener name and how to read its state
	 */
	default void onBreaker(BiConsumer<String, Supplier<BreakerState>> listener) {
	}

}
