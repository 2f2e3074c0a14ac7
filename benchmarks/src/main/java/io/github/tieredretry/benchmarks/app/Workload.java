package io.github.tieredretry.benchmarks.app;

import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.github.tieredretry.benchmarks.broker.MessagePublisher;
import io.github.tieredretry.headers.RetryHeaders;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;

/**
 * What one listener does, and what the harness measures of it, round by round. By default
 * the listener does no work beyond this bookkeeping: the benchmarks measure what the
 * retry machinery costs, which real work would hide. A fixed wait per invocation stands
 * in for real work when asked for.
 */
public final class Workload {

	/** The tier of a retry that RabbitMQ holds in its queue, as the starter names it. */
	public static final String BROKER_TIER = "broker";

	private final long workNanos;

	private final AtomicLong retriesOnBroker = new AtomicLong();

	private final AtomicLong retriesInTiers = new AtomicLong();

	private final AtomicLong shortestDelayMillis = new AtomicLong(Long.MAX_VALUE);

	private final AtomicLong longestDelayMillis = new AtomicLong(Long.MIN_VALUE);

	private volatile Round round = new Round("idle", 0, 0, 0, false);

	Workload(long workNanos) {
		this.workNanos = workNanos;
	}

	/**
	 * Start a round; deliveries of messages from other rounds are ignored from now on.
	 * @param id the round's id (prefix of its message ids)
	 * @param successes messages expected to be processed
	 * @param healthy of which never fail
	 * @param forwards failures expected to be forwarded
	 * @param recordLateness whether to record when retries arrive, and how late
	 * @return the round
	 */
	public Round startRound(String id, int successes, int healthy, int forwards, boolean recordLateness) {
		Round started = new Round(id, successes, healthy, forwards, recordLateness);
		this.round = started;
		return started;
	}

	/**
	 * Handle a delivery: fail if the message's script says so, else count it as
	 * processed.
	 * @param message the message
	 */
	public void handle(Message message) {
		MessageProperties properties = message.getMessageProperties();
		handle(properties.getMessageId(), properties.getHeaders());
	}

	/**
	 * Handle a delivery by its id and headers, as a consumer without Spring sees it.
	 * @param messageId the message's id
	 * @param headers its headers
	 * @throws SimulatedFailure when the message's script says this attempt fails
	 */
	public void handle(@Nullable String messageId, Map<String, @Nullable Object> headers) {
		if (this.workNanos > 0) {
			LockSupport.parkNanos(this.workNanos);
		}
		this.round.handle(messageId, headers);
	}

	/**
	 * Count a confirmed forward of a failed message.
	 * @param messageId the message's id
	 */
	public void forwarded(@Nullable String messageId) {
		this.round.forwarded(messageId);
	}

	/**
	 * Count a retry the starter scheduled, as its {@code RetryScheduledEvent} says: after
	 * the forward's confirm on the tiers, after the {@code basic.reject} on the broker
	 * backend.
	 * @param messageId the message's id
	 * @param tier where the retry waits: a tier's name, or {@value #BROKER_TIER}
	 * @param delay the delay before the retry, drawn with the policy's jitter if it has
	 * one
	 * @param dueEpochMillis when it falls due
	 */
	public void scheduled(@Nullable String messageId, String tier, Duration delay, long dueEpochMillis) {
		this.shortestDelayMillis.accumulateAndGet(delay.toMillis(), Math::min);
		this.longestDelayMillis.accumulateAndGet(delay.toMillis(), Math::max);
		if (BROKER_TIER.equals(tier)) {
			this.retriesOnBroker.incrementAndGet();
		}
		else {
			this.retriesInTiers.incrementAndGet();
		}
		this.round.scheduled(messageId, dueEpochMillis);
		this.round.forwarded(messageId);
	}

	/**
	 * Retries of every round so far that waited in the queue's delayed retry (broker
	 * backend).
	 * @return how many
	 */
	public long retriesOnBroker() {
		return this.retriesOnBroker.get();
	}

	/**
	 * The shortest delay of any retry scheduled so far, every round's.
	 * @return milliseconds, or {@link Long#MAX_VALUE} before the first
	 */
	public long shortestDelayMillis() {
		return this.shortestDelayMillis.get();
	}

	/**
	 * The longest delay of any retry scheduled so far, every round's.
	 * @return milliseconds, or {@link Long#MIN_VALUE} before the first
	 */
	public long longestDelayMillis() {
		return this.longestDelayMillis.get();
	}

	/**
	 * Retries of every round so far that were forwarded to a tier.
	 * @return how many
	 */
	public long retriesInTiers() {
		return this.retriesInTiers.get();
	}

	/**
	 * Count a message parked (its forward to the parking lot confirmed).
	 * @param messageId the message's id
	 */
	public void parked(@Nullable String messageId) {
		this.round.parked(messageId);
	}

	/** The failure a scripted message raises. */
	public static final class SimulatedFailure extends RuntimeException {

		private static final long serialVersionUID = 1L;

		SimulatedFailure(String messageId, int attempt, int failingAttempts) {
			super("Simulated failure of message " + messageId + " (attempt " + attempt + " of " + failingAttempts
					+ " failing attempts)");
		}

		SimulatedFailure(String messageId) {
			super("Simulated failure of message " + messageId + ": the listener's downstream is down");
		}

	}

	/**
	 * One measured round of a listener: timestamps are {@link System#nanoTime()}.
	 */
	public static final class Round {

		private final String id;

		private final String messageIdPrefix;

		private final CountDownLatch firstDelivery = new CountDownLatch(1);

		private final CountDownLatch allProcessed;

		private final CountDownLatch healthyProcessed;

		private final CountDownLatch allForwarded;

		private final AtomicLong firstDeliveryNanos = new AtomicLong();

		private final AtomicLong lastHealthyNanos = new AtomicLong();

		private final AtomicLong lastProcessedNanos = new AtomicLong();

		private final AtomicLong lastForwardNanos = new AtomicLong();

		private final AtomicInteger healthyCount = new AtomicInteger();

		private final AtomicInteger forwardCount = new AtomicInteger();

		private final AtomicInteger parkedCount = new AtomicInteger();

		/**
		 * Whether the listener's downstream is down: every attempt of this round's
		 * messages fails meanwhile.
		 */
		private volatile boolean downstreamDown;

		private final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();

		private final long @Nullable [] lateness;

		private final long @Nullable [] arrivals;

		private final AtomicInteger latenessCount = new AtomicInteger();

		/**
		 * When each failed message's retry falls due (epoch ms), by message id, as the
		 * starter announced it: a retry on the broker backend carries no
		 * {@code retry-due} header (nothing is written into the message).
		 */
		private final Map<String, Long> dues = new ConcurrentHashMap<>();

		Round(String id, int successes, int healthy, int forwards, boolean recordLateness) {
			this.id = id;
			this.messageIdPrefix = id + "-";
			this.allProcessed = new CountDownLatch(successes);
			this.healthyProcessed = new CountDownLatch(healthy);
			this.allForwarded = new CountDownLatch(forwards);
			this.lateness = recordLateness ? new long[successes] : null;
			this.arrivals = recordLateness ? new long[successes] : null;
		}

		void handle(@Nullable String id, Map<String, @Nullable Object> headers) {
			long now = System.nanoTime();
			if (!this.id.equals(stringHeader(headers, MessagePublisher.ROUND_HEADER))) {
				return;
			}
			if (this.firstDeliveryNanos.compareAndSet(0, now)) {
				this.firstDelivery.countDown();
			}
			String messageId = String.valueOf(id);
			if (this.downstreamDown) {
				throw new SimulatedFailure(messageId);
			}
			Object failing = headers.get(MessagePublisher.FAILING_ATTEMPTS_HEADER);
			int failingAttempts = (failing instanceof Number number) ? number.intValue() : 0;
			if (failingAttempts > 0) {
				int attempt = this.attempts.computeIfAbsent(messageId, (key) -> new AtomicInteger()).incrementAndGet();
				if (attempt <= failingAttempts) {
					throw new SimulatedFailure(messageId, attempt, failingAttempts);
				}
			}
			if (this.lateness != null && this.arrivals != null) {
				Long announced = this.dues.remove(messageId);
				Long due = (headers.get(RetryHeaders.DUE) instanceof Number header) ? header.longValue() : announced;
				if (due != null) {
					int slot = this.latenessCount.getAndIncrement();
					if (slot < this.lateness.length) {
						this.lateness[slot] = System.currentTimeMillis() - due;
						this.arrivals[slot] = now;
					}
				}
			}
			if (failingAttempts == 0) {
				this.healthyCount.incrementAndGet();
				this.lastHealthyNanos.accumulateAndGet(now, Math::max);
				this.healthyProcessed.countDown();
			}
			this.lastProcessedNanos.accumulateAndGet(now, Math::max);
			this.allProcessed.countDown();
		}

		void forwarded(@Nullable String messageId) {
			if (messageId == null || !messageId.startsWith(this.messageIdPrefix)) {
				return;
			}
			this.forwardCount.incrementAndGet();
			this.lastForwardNanos.accumulateAndGet(System.nanoTime(), Math::max);
			this.allForwarded.countDown();
		}

		void scheduled(@Nullable String messageId, long dueEpochMillis) {
			if (this.lateness != null && messageId != null && messageId.startsWith(this.messageIdPrefix)) {
				this.dues.put(messageId, dueEpochMillis);
			}
		}

		void parked(@Nullable String messageId) {
			if (messageId != null && messageId.startsWith(this.messageIdPrefix)) {
				this.parkedCount.incrementAndGet();
			}
		}

		/**
		 * Take the listener's downstream down, or bring it back: while it is down, every
		 * attempt of this round's messages fails.
		 * @param down whether it is down
		 */
		public void downstreamDown(boolean down) {
			this.downstreamDown = down;
		}

		private static @Nullable String stringHeader(Map<String, @Nullable Object> headers, String name) {
			// Spring converts string headers to String, the plain client leaves them
			// LongString: both print.
			Object value = headers.get(name);
			return (value != null) ? value.toString() : null;
		}

		/**
		 * Wait for the first delivery of this round.
		 * @param timeout how long at most
		 * @return the first delivery's time
		 */
		public long awaitFirstDelivery(Duration timeout) {
			await(this.firstDelivery, timeout, "the first delivery");
			return this.firstDeliveryNanos.get();
		}

		/**
		 * Wait until every message is processed (failing ones after their retries).
		 * @param timeout how long at most
		 */
		public void awaitAllProcessed(Duration timeout) {
			await(this.allProcessed, timeout, "all messages to be processed");
		}

		/**
		 * Wait until every message that never fails is processed, or the deadline passes.
		 * @param deadlineNanos the deadline
		 * @return whether all of them were processed
		 */
		public boolean awaitHealthyUntil(long deadlineNanos) {
			try {
				return this.healthyProcessed.await(Math.max(0, deadlineNanos - System.nanoTime()),
						TimeUnit.NANOSECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted", ex);
			}
		}

		/**
		 * Wait until every expected failure has been forwarded.
		 * @param timeout how long at most
		 */
		public void awaitAllForwarded(Duration timeout) {
			await(this.allForwarded, timeout, "all failures to be forwarded");
		}

		private void await(CountDownLatch latch, Duration timeout, String what) {
			try {
				if (!latch.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
					throw new IllegalStateException("Round " + this.id + " timed out after " + timeout + " waiting for "
							+ what + " (" + latch.getCount() + " missing; healthy processed " + this.healthyCount.get()
							+ ", forwarded " + this.forwardCount.get() + ")");
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted waiting for " + what, ex);
			}
		}

		public int healthyCount() {
			return this.healthyCount.get();
		}

		public long lastHealthyNanos() {
			return this.lastHealthyNanos.get();
		}

		/**
		 * When the last message of this round was processed, failed ones after their
		 * retries included.
		 * @return its {@link System#nanoTime()}, or 0 before the first
		 */
		public long lastProcessedNanos() {
			return this.lastProcessedNanos.get();
		}

		public int forwardCount() {
			return this.forwardCount.get();
		}

		/**
		 * Messages of this round parked so far.
		 * @return how many
		 */
		public int parkedCount() {
			return this.parkedCount.get();
		}

		public long lastForwardNanos() {
			return this.lastForwardNanos.get();
		}

		/**
		 * When each retry reached the listener, in the order of
		 * {@link #latenessMillis()}.
		 * @return one {@link System#nanoTime()} per recorded retry
		 */
		public long[] retryArrivalNanos() {
			return (this.arrivals != null)
					? Arrays.copyOf(this.arrivals, Math.min(this.latenessCount.get(), this.arrivals.length))
					: new long[0];
		}

		/**
		 * When the round's first message was delivered.
		 * @return its {@link System#nanoTime()}, or 0 before it
		 */
		public long firstDeliveryNanos() {
			return this.firstDeliveryNanos.get();
		}

		/**
		 * How late each retry arrived after its {@code retry-due} time, in milliseconds
		 * (negative: early).
		 * @return one value per recorded retry
		 */
		public long[] latenessMillis() {
			return (this.lateness != null)
					? Arrays.copyOf(this.lateness, Math.min(this.latenessCount.get(), this.lateness.length))
					: new long[0];
		}

	}

}
