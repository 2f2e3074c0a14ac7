package io.github.tieredretry.internal.delivery;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.github.tieredretry.internal.forwarding.RetryExecutors;
import io.github.tieredretry.internal.settlement.Acknowledgement;
import io.github.tieredretry.listener.AsyncAttemptTimeoutException;
import io.github.tieredretry.observation.RetryObservations;
import io.micrometer.observation.Observation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Attempts of asynchronous listeners that are still running: each one ends exactly once,
 * when its result completes, when it times out ({@code retry.async.attempt-timeout}: the
 * result is cancelled and the attempt fails with an {@link AsyncAttemptTimeoutException})
 * or when the application stops (the result is cancelled and its deliveries are left to
 * their consumer channel, which gives them back uncounted once its container stops
 * consuming).
 * <p>
 * What follows an attempt (an ack, an immediate retry, a retry or park decision and its
 * forward) runs on the starter's listener threads, never on the thread that completed the
 * result: that may be a Netty event loop, a Reactor scheduler or a coroutine dispatcher
 * that user code must not block, or the consumer thread itself when the result was
 * complete already.
 */
public final class AsyncAttempts {

	private static final Log logger = LogFactory.getLog(AsyncAttempts.class);

	private final RetryExecutors executors;

	private final Duration timeout;

	private final RetryObservations observations;

	private final Set<Attempt> running = ConcurrentHashMap.newKeySet();

	/**
	 * Create the attempts' registry.
	 * @param executors where attempts end (the listener threads) and time out (the timer)
	 * @param timeout how long an attempt may take
	 * @param observations whose current observation follows an attempt to its end
	 */
	public AsyncAttempts(RetryExecutors executors, Duration timeout, RetryObservations observations) {
		this.executors = executors;
		this.timeout = timeout;
		this.observations = observations;
	}

	/**
	 * Wait for a result on the calling thread, at most the attempt timeout: a breaker's
	 * probe waits for its outcome as a listener that returns when it is done would.
	 * @param result the result
	 * @return its failure, or {@code null} when it succeeded
	 */
	@Nullable Throwable await(AsyncResult result) {
		try {
			result.completion().get(this.timeout.toNanos(), TimeUnit.NANOSECONDS);
			return null;
		}
		catch (ExecutionException | CancellationException ex) {
			return failureOf(result, ex);
		}
		catch (TimeoutException ex) {
			result.cancel();
			return timedOut(result);
		}
		catch (InterruptedException ex) {
			// The container stops.
			Thread.currentThread().interrupt();
			result.cancel();
			return failureOf(result, new CancellationException("interrupted: the application stops"));
		}
	}

	/**
	 * Follow a result without waiting for it.
	 * @param result the result
	 * @param holding the deliveries it holds, given back if the application stops first
	 * @param then what follows the attempt, given its failure or {@code null}; on a
	 * listener thread
	 */
	void whenDone(AsyncResult result, List<Acknowledgement> holding, Consumer<@Nullable Throwable> then) {
		Observation observation = this.observations.isEnabled() ? this.observations.currentObservation() : null;
		Attempt attempt = new Attempt(result, holding, then, observation);
		this.running.add(attempt);
		try {
			attempt.timeout = this.executors.schedule(() -> attempt.end(timedOut(result), true), this.timeout,
					this.executors.listeners());
		}
		catch (RejectedExecutionException ex) {
			attempt.abandon();
			return;
		}
		result.completion().whenComplete((value, failure) -> {
			Throwable outcome = (failure != null) ? failureOf(result, failure) : null;
			try {
				this.executors.listeners().execute(() -> attempt.end(outcome, false));
			}
			catch (RejectedExecutionException ex) {
				attempt.abandon();
			}
		});
	}

	/**
	 * The application stops: running attempts get a bounded time to end; those still
	 * running then are cancelled and their deliveries left to their consumer channels,
	 * which give them back uncounted once their containers stop consuming (given back
	 * now, they could come back to a consumer that has not stopped yet).
	 * @param wait how long to wait for running attempts
	 */
	public void stopping(Duration wait) {
		List<Attempt> attempts = List.copyOf(this.running);
		if (attempts.isEmpty()) {
			return;
		}
		try {
			CompletableFuture.allOf(attempts.stream().map((attempt) -> attempt.ended).toArray(CompletableFuture[]::new))
				.get(wait.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException | ExecutionException ex) {
			// Those still running are abandoned below.
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		this.running.forEach(Attempt::leaveToChannels);
	}

	private AsyncAttemptTimeoutException timedOut(AsyncResult result) {
		return new AsyncAttemptTimeoutException("The listener's " + result.kind() + " did not complete within "
				+ this.timeout.toMillis() + " ms (retry.async.attempt-timeout); it was cancelled");
	}

	/**
	 * The failure an attempt's result completed with, unwrapped; a cancellation says what
	 * was cancelled.
	 * @param result the result
	 * @param failure what it completed with
	 * @return the failure
	 */
	static Throwable failureOf(AsyncResult result, Throwable failure) {
		Throwable current = failure;
		while ((current instanceof CompletionException || current instanceof ExecutionException)
				&& ListenerFailures.causeOf(current) != null) {
			current = ListenerFailures.causeOf(current);
		}
		if (current instanceof CancellationException cancelled) {
			CancellationException described = new CancellationException("The listener's " + result.kind()
					+ " was cancelled" + ((cancelled.getMessage() != null) ? ": " + cancelled.getMessage() : ""));
			described.initCause(cancelled);
			return described;
		}
		return current;
	}

	private final class Attempt {

		private final AsyncResult result;

		private final List<Acknowledgement> holding;

		private final Consumer<@Nullable Throwable> then;

		private final @Nullable Observation observation;

		private final AtomicBoolean over = new AtomicBoolean();

		private final CompletableFuture<Void> ended = new CompletableFuture<>();

		private volatile @Nullable ScheduledFuture<?> timeout;

		Attempt(AsyncResult result, List<Acknowledgement> holding, Consumer<@Nullable Throwable> then,
				@Nullable Observation observation) {
			this.result = result;
			this.holding = holding;
			this.then = then;
			this.observation = observation;
		}

		void end(@Nullable Throwable failure, boolean timedOut) {
			if (!this.over.compareAndSet(false, true)) {
				return;
			}
			ScheduledFuture<?> scheduled = this.timeout;
			if (scheduled != null) {
				scheduled.cancel(false);
			}
			if (timedOut) {
				this.result.cancel();
			}
			try {
				if (this.observation != null) {
					// The attempt's listener observation (Spring AMQP's, on the
					// consumer thread) is its forward's parent, as when synchronous.
					try (Observation.Scope scope = this.observation.openScope()) {
						this.then.accept(failure);
					}
				}
				else {
					this.then.accept(failure);
				}
			}
			catch (RuntimeException | Error ex) {
				logger.error("Could not settle the messages of an asynchronous listener's attempt; they go back to "
						+ "their queue", ex);
				this.holding.forEach(Acknowledgement::requeue);
			}
			finally {
				AsyncAttempts.this.running.remove(this);
				this.ended.complete(null);
			}
		}

		// The starter's threads are gone: its deliveries go back to their queue.
		void abandon() {
			stop(Acknowledgement::requeue);
		}

		void leaveToChannels() {
			stop(Acknowledgement::leaveToChannel);
		}

		private void stop(Consumer<Acknowledgement> settlement) {
			if (!this.over.compareAndSet(false, true)) {
				return;
			}
			ScheduledFuture<?> scheduled = this.timeout;
			if (scheduled != null) {
				scheduled.cancel(false);
			}
			this.result.cancel();
			this.holding.forEach(settlement);
			AsyncAttempts.this.running.remove(this);
			this.ended.complete(null);
		}

	}

}
