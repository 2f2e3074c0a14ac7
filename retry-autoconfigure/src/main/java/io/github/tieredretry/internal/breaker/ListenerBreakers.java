package io.github.tieredretry.internal.breaker;

import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.github.tieredretry.listener.BreakerState;
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

	private final List<BiConsumer<String, Supplier<BreakerState>>> creationListeners = new CopyOnWriteArrayList<>();

	@Override
	public ListenerGate gateFor(String listener, List<String> queues, BreakerSettings settings) {
		if (!settings.enabled()) {
			return ListenerGate.ALWAYS_OPEN;
		}
		ListenerBreaker breaker = new ListenerBreaker(listener, queues, settings, this.clock, this.events);
		ListenerBreaker existing = this.breakers.putIfAbsent(listener, breaker);
		if (existing != null) {
			return existing;
		}
		this.creationListeners.forEach((creation) -> creation.accept(listener, breaker::state));
		return breaker;
	}

	@Override
	public void onBreaker(BiConsumer<String, Supplier<BreakerState>> listener) {
		this.creationListeners.add(listener);
		this.breakers.forEach((name, breaker) -> listener.accept(name, breaker::state));
	}

	@Override
	public boolean open(String listener) {
		ListenerBreaker breaker = this.breakers.get(listener);
		if (breaker != null) {
			breaker.open();
		}
		return breaker != null;
	}

	@Override
	public boolean close(String listener) {
		ListenerBreaker breaker = this.breakers.get(listener);
		if (breaker != null) {
			breaker.close();
		}
		return breaker != null;
	}

	/**
	 * The breaker of a listener.
	 * @param listener the listener's name, e.g. {@code OrderListener#onOrder}
	 * @return its breaker, if it has one
	 */
	Optional<ListenerBreaker> get(String listener) {
		return Optional.ofNullable(this.breakers.get(listener));
	}

	@Override
	public List<BreakerState> breakers() {
		return this.breakers.values().stream().map(ListenerBreaker::state).toList();
	}

	/** The application stops: consumers that wait give their messages back. */
	@Override
	public void stopping() {
		this.breakers.values().forEach(ListenerBreaker::stopping);
	}

}
