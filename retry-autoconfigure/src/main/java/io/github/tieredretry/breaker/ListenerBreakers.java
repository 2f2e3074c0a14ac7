package io.github.tieredretry.breaker;

import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.Consumer;

import io.github.tieredretry.listener.ListenerGate;
import io.github.tieredretry.listener.ListenerGates;
import io.github.tieredretry.policy.BreakerSettings;

/**
 * The circuit breakers of every retryable listener that has one, by listener name.
 */
public final class ListenerBreakers implements ListenerGates {

	private final Map<String, ListenerBreaker> breakers = new ConcurrentSkipListMap<>();

	private final Clock clock;

	private final Consumer<Object> events;

	/**
	 * Create the registry.
	 * @param clock the clock
	 * @param events where the breakers' events are published
	 */
	public ListenerBreakers(Clock clock, Consumer<Object> events) {
		this.clock = clock;
		this.events = events;
	}

	@Override
	public ListenerGate gateFor(String listener, List<String> queues, BreakerSettings settings) {
		if (!settings.enabled()) {
			return ListenerGate.ALWAYS_OPEN;
		}
		return this.breakers.computeIfAbsent(listener,
				(name) -> new ListenerBreaker(name, queues, settings, this.clock, this.events));
	}

	/**
	 * The breaker of a listener.
	 * @param listener the listener's name, e.g. {@code OrderListener#onOrder}
	 * @return its breaker, if it has one
	 */
	public Optional<ListenerBreaker> get(String listener) {
		return Optional.ofNullable(this.breakers.get(listener));
	}

	/**
	 * The states of all breakers, by listener name.
	 * @return the states
	 */
	public List<BreakerState> states() {
		return this.breakers.values().stream().map(ListenerBreaker::state).toList();
	}

	/** The application stops: consumers that wait give their messages back. */
	@Override
	public void stopping() {
		this.breakers.values().forEach(ListenerBreaker::stopping);
	}

}
