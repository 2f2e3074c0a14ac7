package io.github.tieredretry.internal.breaker;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnStateTransitionEvent;
import io.github.tieredretry.event.ListenerPausedEvent;
import io.github.tieredretry.event.ListenerResumedEvent;
import io.github.tieredretry.listener.BreakerState;
import io.github.tieredretry.listener.ListenerGate;
import io.github.tieredretry.policy.BreakerSettings;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The circuit breaker of one retryable listener, a Resilience4j {@link CircuitBreaker}
 * over the outcomes of its recent messages.
 * <ul>
 * <li><b>Closed</b>: messages go through; retryable failures count against the listener's
 * downstream, failures no retry fixes (a bad message) do not.</li>
 * <li><b>Open</b>: the failure rate reached the threshold. The listener's consumers take
 * no new message: each waits with the message it holds, unacknowledged, so nothing is
 * forwarded, parked, requeued or counted as a delivery during the outage, and the queue
 * keeps its order.</li>
 * <li><b>Half-open</b>: after the wait, a few messages go through; if they succeed the
 * breaker closes and the consumers go on, if they fail it opens again.</li>
 * </ul>
 * Operators can open it (it then stays open) or close it.
 */
final class ListenerBreaker implements ListenerGate {

	private static final Log logger = LogFactory.getLog(ListenerBreaker.class);

	/**
	 * The longest a waiting consumer sleeps before it asks again (the open wait may end,
	 * the app may stop).
	 */
	private static final long LONGEST_WAIT_MILLIS = 1000;

	private final String listener;

	private final List<String> queues;

	private final BreakerSettings settings;

	private final CircuitBreaker breaker;

	private final Clock clock;

	private final java.util.function.Consumer<Object> events;

	private final Object waiting = new Object();

	private volatile Instant since;

	private volatile @Nullable Instant pausedSince;

	private volatile boolean stopping;

	/**
	 * Create a breaker.
	 * @param listener the listener's name
	 * @param queues the queues it consumes
	 * @param settings its settings
	 * @param clock the clock
	 * @param events where {@link ListenerPausedEvent} and {@link ListenerResumedEvent}
	 * are published
	 */
	ListenerBreaker(String listener, List<String> queues, BreakerSettings settings, Clock clock,
			java.util.function.Consumer<Object> events) {
		this.listener = listener;
		this.queues = List.copyOf(queues);
		this.settings = settings;
		this.clock = clock;
		this.events = events;
		this.since = clock.instant();
		CircuitBreakerConfig config = CircuitBreakerConfig.custom()
			.failureRateThreshold(settings.failureRateThreshold())
			.slidingWindow(settings.slidingWindowSize(), settings.minimumCalls(),
					CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
			.waitDurationInOpenState(settings.waitInOpenState())
			.permittedNumberOfCallsInHalfOpenState(settings.probesInHalfOpenState())
			// The consumers that wait ask again at least every second: the first after
			// the wait opens it half.
			.automaticTransitionFromOpenToHalfOpenEnabled(false)
			.writableStackTraceEnabled(false)
			.build();
		this.breaker = CircuitBreaker.of(listener, config);
		this.breaker.getEventPublisher().onStateTransition(this::transitioned);
	}

	@Override
	public Passage awaitPassage() {
		while (!this.stopping) {
			if (this.breaker.tryAcquirePermission()) {
				return (this.breaker.getState() == CircuitBreaker.State.HALF_OPEN) ? Passage.PROBE : Passage.PASS;
			}
			synchronized (this.waiting) {
				if (this.stopping) {
					break;
				}
				try {
					this.waiting.wait(LONGEST_WAIT_MILLIS);
				}
				catch (InterruptedException ex) {
					// The container is stopping: the message goes back to its queue.
					Thread.currentThread().interrupt();
					return Passage.STOPPED;
				}
			}
		}
		return Passage.STOPPED;
	}

	@Override
	public boolean isPaused() {
		CircuitBreaker.State state = this.breaker.getState();
		return state == CircuitBreaker.State.OPEN || state == CircuitBreaker.State.FORCED_OPEN;
	}

	@Override
	public void succeeded(Duration took) {
		this.breaker.onSuccess(took.toNanos(), TimeUnit.NANOSECONDS);
	}

	@Override
	public void failed(Duration took, Throwable failure) {
		this.breaker.onError(took.toNanos(), TimeUnit.NANOSECONDS, failure);
	}

	@Override
	public void ignored() {
		this.breaker.releasePermission();
	}

	/** An operator pauses the listener until {@link #close()}. */
	void open() {
		this.breaker.transitionToForcedOpenState();
	}

	/** An operator resumes the listener now, with a fresh window of outcomes. */
	void close() {
		this.breaker.transitionToClosedState();
	}

	/** The application stops: waiting consumers give their messages back. */
	void stopping() {
		this.stopping = true;
		wakeWaitingConsumers();
	}

	/**
	 * Where the breaker stands.
	 * @return its state
	 */
	BreakerState state() {
		CircuitBreaker.State state = this.breaker.getState();
		Instant resumesAt = (state == CircuitBreaker.State.OPEN) ? this.since.plus(this.settings.waitInOpenState())
				: null;
		float failureRate = this.breaker.getMetrics().getFailureRate();
		return new BreakerState(this.listener, this.queues, statusOf(state), this.since, resumesAt,
				(failureRate < 0) ? null : failureRate, this.settings);
	}

	private static BreakerState.Status statusOf(CircuitBreaker.State state) {
		return switch (state) {
			case OPEN -> BreakerState.Status.OPEN;
			case HALF_OPEN -> BreakerState.Status.HALF_OPEN;
			case FORCED_OPEN -> BreakerState.Status.FORCED_OPEN;
			default -> BreakerState.Status.CLOSED;
		};
	}

	String listener() {
		return this.listener;
	}

	private void transitioned(CircuitBreakerOnStateTransitionEvent event) {
		Instant now = this.clock.instant();
		this.since = now;
		CircuitBreaker.State to = event.getStateTransition().getToState();
		CircuitBreaker.State from = event.getStateTransition().getFromState();
		if (to == CircuitBreaker.State.OPEN || to == CircuitBreaker.State.FORCED_OPEN) {
			boolean forced = to == CircuitBreaker.State.FORCED_OPEN;
			if (this.pausedSince == null) {
				this.pausedSince = now;
			}
			float failureRate = forced ? -1 : this.breaker.getMetrics().getFailureRate();
			Instant resumesAt = forced ? null : now.plus(this.settings.waitInOpenState());
			if (forced) {
				logger.warn(this.listener + " on " + this.queues + " paused by an operator: its consumers take no "
						+ "new messages until its breaker is closed");
			}
			else if (from == CircuitBreaker.State.HALF_OPEN) {
				logger.warn(this.listener + " on " + this.queues + " stays paused: the messages it tried still "
						+ "failed; trying again at " + resumesAt);
			}
			else {
				logger.warn(this.listener + " on " + this.queues + " paused: " + Math.round(failureRate)
						+ "% of its last " + this.settings.slidingWindowSize() + " messages failed, so its downstream "
						+ "looks down. Its consumers take no new messages (nothing is retried or parked meanwhile); "
						+ "it tries " + this.settings.probesInHalfOpenState() + " messages again at " + resumesAt);
			}
			if (from == CircuitBreaker.State.CLOSED || forced) {
				this.events.accept(new ListenerPausedEvent(this.listener, this.queues, failureRate, resumesAt));
			}
		}
		else if (to == CircuitBreaker.State.HALF_OPEN) {
			logger.info(this.listener + " tries " + this.settings.probesInHalfOpenState()
					+ " messages to see whether its downstream is back");
		}
		else if (to == CircuitBreaker.State.CLOSED) {
			Instant paused = this.pausedSince;
			this.pausedSince = null;
			if (paused != null) {
				Duration pausedFor = Duration.between(paused, now);
				logger.info(this.listener + " on " + this.queues + " resumed after " + pausedFor.toMillis() + " ms");
				this.events.accept(new ListenerResumedEvent(this.listener, this.queues, pausedFor));
			}
		}
		wakeWaitingConsumers();
	}

	private void wakeWaitingConsumers() {
		synchronized (this.waiting) {
			this.waiting.notifyAll();
		}
	}

}
