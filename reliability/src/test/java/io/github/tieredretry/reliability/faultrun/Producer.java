package io.github.tieredretry.reliability.faultrun;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ShutdownSignalException;
import io.github.tieredretry.reliability.consumer.FaultPlan;
import io.github.tieredretry.testbrokers.HarnessBroker;
import org.jspecify.annotations.Nullable;

import static org.awaitility.Awaitility.await;

/**
 * Publishes the run's messages in confirmed, mandatory batches, and survives the faults:
 * a batch that was not confirmed in full (connection closed, broker restarting, returned)
 * is published again on a new connection. Such re-sends can duplicate a message, never
 * lose one, and are counted.
 * <p>
 * The producer stays at most a window of messages ahead of the consumer's outcomes, so
 * that publishing goes on while the faults happen rather than finishing before the first
 * one; with a rate, it also publishes no faster than that many messages per second, so
 * that a run lasts long enough for faults that take the broker a while (a node that
 * restarts).
 */
final class Producer implements Runnable {

	private static final int BATCH = 200;

	private final HarnessBroker broker;

	private final String vhost;

	private final String queue;

	private final FaultPlans plans;

	private final LongSupplier outcomes;

	private final int window;

	private final int rate;

	private final AtomicBoolean stopped = new AtomicBoolean();

	/** Messages with an index below this may be published. */
	private volatile int allowed;

	private volatile int confirmed;

	private volatile long resent;

	private final List<long[]> resends = new CopyOnWriteArrayList<>();

	private volatile @Nullable Throwable failure;

	private @Nullable Connection connection;

	private @Nullable Channel channel;

	private final AtomicBoolean returned = new AtomicBoolean();

	/**
	 * Prepare a producer.
	 * @param broker the broker
	 * @param vhost the virtual host
	 * @param queue the work queue
	 * @param plans the messages to publish
	 * @param outcomes the consumers' outcomes so far
	 * @param window how far the producer may run ahead of the outcomes
	 * @param rate the most messages per second, or 0 for no limit
	 */
	Producer(HarnessBroker broker, String vhost, String queue, FaultPlans plans, LongSupplier outcomes, int window,
			int rate) {
		this.broker = broker;
		this.vhost = vhost;
		this.queue = queue;
		this.plans = plans;
		this.outcomes = outcomes;
		this.window = window;
		this.rate = rate;
		this.allowed = plans.size();
	}

	/**
	 * Publish no further than this, until allowed more: a fault that takes a while (a
	 * node that restarts) must not see the rest of the run published and processed before
	 * it is over.
	 * @param messages how many messages, counting from the first, may be published
	 */
	void allowUpTo(int messages) {
		this.allowed = Math.min(messages, this.plans.size());
	}

	@Override
	public void run() {
		long startNanos = System.nanoTime();
		try {
			for (int start = 0; start < this.plans.size() && !this.stopped.get(); start += BATCH) {
				int end = Math.min(start + BATCH, this.plans.size());
				long due = (this.rate > 0) ? startNanos + start * 1_000_000_000L / this.rate : startNanos;
				await().forever()
					.pollInSameThread()
					.pollInterval(Duration.ofMillis(20))
					.until(() -> this.stopped.get() || (end - this.outcomes.getAsLong() <= this.window
							&& end <= this.allowed && System.nanoTime() >= due));
				publishConfirmed(start, end);
			}
		}
		catch (RuntimeException | Error ex) {
			this.failure = ex;
		}
		finally {
			disconnect();
		}
	}

	private void publishConfirmed(int start, int end) {
		boolean firstTry = true;
		while (!this.stopped.get()) {
			if (!firstTry) {
				this.resent += end - start;
				this.resends.add(new long[] { System.currentTimeMillis(), end - start });
			}
			firstTry = false;
			try {
				Channel current = channel();
				this.returned.set(false);
				for (int index = start; index < end; index++) {
					current.basicPublish("", this.queue, true, properties(index),
							("order " + index).getBytes(StandardCharsets.UTF_8));
				}
				current.waitForConfirmsOrDie(30_000);
				if (!this.returned.get()) {
					this.confirmed = end;
					return;
				}
			}
			catch (IOException | TimeoutException | ShutdownSignalException ex) {
				// Not confirmed in full: publish the whole batch again on a new
				// connection.
				disconnect();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Producer interrupted", ex);
			}
		}
	}

	private AMQP.BasicProperties properties(int index) {
		FaultPlan plan = this.plans.of(index);
		return new AMQP.BasicProperties.Builder().messageId(FaultPlans.messageId(index))
			.contentType("text/plain")
			.deliveryMode(2)
			.headers(Map.of(FaultPlan.HEADER, plan.headerValue()))
			.build();
	}

	private Channel channel() {
		Channel current = this.channel;
		if (current != null && current.isOpen()) {
			return current;
		}
		disconnect();
		// The broker may be restarting: keep trying for as long as a restart can take.
		await().atMost(Duration.ofMinutes(3))
			.pollInSameThread()
			.pollInterval(Duration.ofMillis(250))
			.ignoreExceptions()
			.until(() -> {
				Connection opened = this.broker.connect(this.vhost, "fault-run-producer");
				Channel created = opened.createChannel();
				created.confirmSelect();
				created.addReturnListener((returnMessage) -> this.returned.set(true));
				this.connection = opened;
				this.channel = created;
				return true;
			});
		return this.channel;
	}

	private void disconnect() {
		Connection current = this.connection;
		this.connection = null;
		this.channel = null;
		if (current != null) {
			try {
				current.abort(2000);
			}
			catch (RuntimeException ex) {
				// Gone already.
			}
		}
	}

	void stop() {
		this.stopped.set(true);
	}

	/**
	 * Messages published and confirmed, counting from the first: when it equals the run's
	 * size, the producer is done.
	 * @return the count
	 */
	int confirmed() {
		return this.confirmed;
	}

	long resent() {
		return this.resent;
	}

	/**
	 * Each re-send of a batch: when, and how many messages.
	 * @return {@code [epoch milliseconds, messages]} per re-sent batch
	 */
	List<long[]> resends() {
		return List.copyOf(this.resends);
	}

	@Nullable Throwable failure() {
		return this.failure;
	}

}
