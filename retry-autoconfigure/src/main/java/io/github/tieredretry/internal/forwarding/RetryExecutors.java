package io.github.tieredretry.internal.forwarding;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The starter's threads, in one place. Each kind of work has a thread of its own, so that
 * work that may wait for the broker never holds up work that must not:
 * <ul>
 * <li>{@code tiered-retry-publisher}: takes channels and publishes forwards. The only
 * thread that talks to the publisher connection; a consumer thread never does, so that a
 * broker alarm (which stops the broker reading that connection) cannot stall a
 * consumer;</li>
 * <li>{@code tiered-retry-acks}: acks and requeues of deliveries once their forward is
 * settled (a frame on the consumer's channel);</li>
 * <li>{@code tiered-retry-events}: application events, after the ack, so that a slow
 * event listener delays no ack;</li>
 * <li>{@code tiered-retry-maintenance}: whatever waits for the broker's reply and can
 * wait: topology checks and declarations, closing channels for good;</li>
 * <li>{@code tiered-retry-timer}: delayed tasks, handed to the others; a confirm timeout
 * (a short bookkeeping step) is settled on it;</li>
 * <li>{@code tiered-retry-listener-1} and {@code -2}: what follows an attempt of an
 * asynchronous listener once its result has completed (never the thread that completed
 * it, which user code may need): the ack, an immediate retry, the decision and the
 * forward.</li>
 * </ul>
 * Confirms, returns and channel shutdowns arrive on the connection's I/O thread, which
 * must never block: what follows them is handed to one of the threads above.
 */
public final class RetryExecutors implements AutoCloseable {

	private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1,
			daemonThread("tiered-retry-timer"));

	private final ExecutorService publisher = Executors.newSingleThreadExecutor(daemonThread("tiered-retry-publisher"));

	private final ExecutorService acks = Executors.newSingleThreadExecutor(daemonThread("tiered-retry-acks"));

	private final ExecutorService events = Executors.newSingleThreadExecutor(daemonThread("tiered-retry-events"));

	private final AtomicInteger listenerThreads = new AtomicInteger();

	private final ExecutorService listeners = Executors.newFixedThreadPool(2,
			(task) -> daemonThread("tiered-retry-listener-" + this.listenerThreads.incrementAndGet()).newThread(task));

	private final ScheduledExecutorService maintenance = Executors
		.newSingleThreadScheduledExecutor(daemonThread("tiered-retry-maintenance"));

	public RetryExecutors() {
		// Every forward schedules its confirm timeout and almost always cancels it: do
		// not keep cancelled ones.
		this.timer.setRemoveOnCancelPolicy(true);
	}

	private static ThreadFactory daemonThread(String name) {
		return (task) -> {
			Thread thread = new Thread(task, name);
			thread.setDaemon(true);
			return thread;
		};
	}

	/**
	 * Where forwards are published.
	 * @return the publisher thread
	 */
	public Executor publisher() {
		return this.publisher;
	}

	/**
	 * Where deliveries are acked or requeued once their forward is settled.
	 * @return the ack thread
	 */
	public Executor acks() {
		return this.acks;
	}

	/**
	 * Where what follows an attempt of an asynchronous listener runs, once its result has
	 * completed.
	 * @return the listener threads
	 */
	public Executor listeners() {
		return this.listeners;
	}

	/**
	 * Where application events are published.
	 * @return the event thread
	 */
	public Executor events() {
		return this.events;
	}

	/**
	 * Where work that waits for the broker's reply runs: topology checks and
	 * declarations, channel closes.
	 * @return the maintenance thread
	 */
	public ScheduledExecutorService maintenance() {
		return this.maintenance;
	}

	/**
	 * Run a task on an executor after a delay.
	 * @param task the task
	 * @param delay the delay
	 * @param executor where the task runs (the timer thread only hands it over)
	 * @return the scheduled hand-over, to cancel it
	 * @throws RejectedExecutionException once the executors are closed
	 */
	public ScheduledFuture<?> schedule(Runnable task, Duration delay, Executor executor) {
		return this.timer.schedule(() -> executeQuietly(executor, task), Math.max(0, delay.toMillis()),
				TimeUnit.MILLISECONDS);
	}

	private static void executeQuietly(Executor executor, Runnable task) {
		try {
			executor.execute(task);
		}
		catch (RejectedExecutionException ex) {
			// Closed meanwhile: what it would have done (ack, requeue) the broker does
			// when the channel closes.
		}
	}

	/**
	 * Stop: acks and events already handed over still run (up to the given wait); delayed
	 * tasks are dropped. A delivery whose delayed requeue is dropped goes back to its
	 * queue when its channel closes.
	 * @param wait how long to wait for acks and events still queued
	 */
	public void close(Duration wait) {
		this.timer.shutdownNow();
		this.publisher.shutdownNow();
		this.maintenance.shutdownNow();
		this.listeners.shutdown();
		this.acks.shutdown();
		this.events.shutdown();
		try {
			long deadline = System.nanoTime() + wait.toNanos();
			this.listeners.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
			this.acks.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
			this.events.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public void close() {
		close(Duration.ofSeconds(5));
	}

}
