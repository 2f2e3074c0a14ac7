package io.github.tieredretry.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

import io.github.tieredretry.event.MessageParkedEvent;
import io.github.tieredretry.event.MessageRecoveredEvent;
import io.github.tieredretry.event.RetryScheduledEvent;
import org.jspecify.annotations.Nullable;

import org.springframework.context.event.EventListener;

/**
 * What happened to the messages of {@code @RetryableListener}s, from the starter's
 * events, by message id ({@code message-id} property: give the messages of a test one).
 * Each {@code await} method waits until the outcome is there and returns its event, or
 * fails with what was seen of the message instead.
 * <ul>
 * <li>{@link #awaitRetry(String, long)}: retry <em>n</em> was scheduled (the message
 * waits in a tier);</li>
 * <li>{@link #awaitRecovered(String)}: the listener processed the message after at least
 * one retry;</li>
 * <li>{@link #awaitParked(String)}: the message was parked, with its reason and retry
 * count.</li>
 * </ul>
 * A message processed on its first attempt raises no event (that would cost every healthy
 * message): assert on what the listener did instead.
 */
public final class RetryOutcomes {

	/**
	 * How long an {@code await} method waits unless {@link #within(Duration)} says
	 * otherwise.
	 */
	public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

	private final Events events;

	private final Duration timeout;

	RetryOutcomes() {
		this(new Events(), DEFAULT_TIMEOUT);
	}

	private RetryOutcomes(Events events, Duration timeout) {
		this.events = events;
		this.timeout = timeout;
	}

	/**
	 * The same outcomes, awaited for another time.
	 * @param timeout how long each {@code await} method waits
	 * @return a view with that timeout
	 */
	public RetryOutcomes within(Duration timeout) {
		return new RetryOutcomes(this.events, timeout);
	}

	/**
	 * Wait until retry {@code retry} of a message has been scheduled.
	 * @param messageId the message's id
	 * @param retry the retry number, 1 for the first retry
	 * @return the event of that retry (tier, delay, due time, exception)
	 */
	public RetryScheduledEvent awaitRetry(String messageId, long retry) {
		return await(messageId, "retry " + retry + " scheduled",
				(event) -> (event instanceof RetryScheduledEvent scheduled && scheduled.retryCount() == retry)
						? scheduled : null);
	}

	/**
	 * Wait until the listener has processed a message after at least one retry.
	 * @param messageId the message's id
	 * @return the event, with the retry that succeeded and the time since the first
	 * failure
	 */
	public MessageRecoveredEvent awaitRecovered(String messageId) {
		return await(messageId, "recovered",
				(event) -> (event instanceof MessageRecoveredEvent recovered) ? recovered : null);
	}

	/**
	 * Wait until a message has been parked.
	 * @param messageId the message's id
	 * @return the event, with the reason, the retries made and the last exception
	 */
	public MessageParkedEvent awaitParked(String messageId) {
		return await(messageId, "parked", (event) -> (event instanceof MessageParkedEvent parked) ? parked : null);
	}

	/**
	 * Everything seen of a message so far, oldest first.
	 * @param messageId the message's id
	 * @return {@link RetryScheduledEvent}s, {@link MessageRecoveredEvent}s and
	 * {@link MessageParkedEvent}s
	 */
	public List<Object> history(String messageId) {
		return this.events.of(messageId);
	}

	/**
	 * Every message parked so far, with or without a message id.
	 * @return the events, oldest first
	 */
	public List<MessageParkedEvent> parked() {
		return this.events.all()
			.stream()
			.filter(MessageParkedEvent.class::isInstance)
			.map(MessageParkedEvent.class::cast)
			.toList();
	}

	/**
	 * Forget everything seen so far, for example between tests that share an application
	 * context and reuse message ids.
	 */
	public void clear() {
		this.events.clear();
	}

	@EventListener
	void onRetryScheduled(RetryScheduledEvent event) {
		this.events.add(event.messageId(), event);
	}

	@EventListener
	void onRecovered(MessageRecoveredEvent event) {
		this.events.add(event.messageId(), event);
	}

	@EventListener
	void onParked(MessageParkedEvent event) {
		this.events.add(event.messageId(), event);
	}

	private <T> T await(String messageId, String outcome, Function<Object, @Nullable T> match) {
		Objects.requireNonNull(messageId, "messageId");
		long deadline = System.nanoTime() + this.timeout.toNanos();
		synchronized (this.events) {
			while (true) {
				for (Object event : this.events.of(messageId)) {
					T matched = match.apply(event);
					if (matched != null) {
						return matched;
					}
				}
				long remaining = deadline - System.nanoTime();
				if (remaining <= 0) {
					throw new AssertionError("Message '" + messageId + "' was not " + outcome + " within "
							+ this.timeout + "; seen: " + describe(this.events.of(messageId)));
				}
				try {
					this.events.wait(Math.max(1, remaining / 1_000_000));
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new AssertionError("Interrupted while waiting for message '" + messageId + "'", ex);
				}
			}
		}
	}

	private static String describe(List<Object> events) {
		if (events.isEmpty()) {
			return "nothing (processed on its first attempt, not delivered yet, or published without this "
					+ "message id)";
		}
		List<String> steps = new ArrayList<>();
		for (Object event : events) {
			if (event instanceof RetryScheduledEvent scheduled) {
				steps.add("retry " + scheduled.retryCount() + " scheduled in tier " + scheduled.tier() + " after "
						+ scheduled.exception());
			}
			else if (event instanceof MessageRecoveredEvent recovered) {
				steps.add("recovered on retry " + recovered.retryCount());
			}
			else if (event instanceof MessageParkedEvent parked) {
				steps.add("parked (" + parked.reason().value() + ", after " + parked.retryCount() + " retries, "
						+ parked.exception() + ")");
			}
		}
		return String.join(", ", steps);
	}

	/**
	 * The events by message id; its monitor guards it and is notified of every new event.
	 */
	private static final class Events {

		private final Map<String, List<Object>> byMessage = new LinkedHashMap<>();

		private final List<Object> all = new ArrayList<>();

		synchronized void add(@Nullable String messageId, Object event) {
			this.all.add(event);
			if (messageId != null) {
				this.byMessage.computeIfAbsent(messageId, (id) -> new ArrayList<>()).add(event);
			}
			notifyAll();
		}

		synchronized List<Object> of(String messageId) {
			return List.copyOf(this.byMessage.getOrDefault(messageId, List.of()));
		}

		synchronized List<Object> all() {
			return List.copyOf(this.all);
		}

		synchronized void clear() {
			this.byMessage.clear();
			this.all.clear();
		}

	}

}
