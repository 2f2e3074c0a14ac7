package io.github.tieredretry.testsupport;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;

import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;

/**
 * Records listener invocations per message id, with the time and the retry count the
 * listener saw, and the message properties when the invocation was recorded from the
 * message.
 */
public final class InvocationRecorder {

	private final Map<String, List<Invocation>> invocations = new ConcurrentHashMap<>();

	/**
	 * Runs on the listener's thread as each invocation is recorded, before the listener
	 * returns or throws.
	 */
	private volatile BiConsumer<String, Invocation> onInvocation = (messageId, invocation) -> {
	};

	/**
	 * One invocation.
	 *
	 * @param at when
	 * @param retryCount the retry count the listener saw
	 * @param succeeded whether the listener returned normally
	 * @param properties the message properties the listener was given, if recorded
	 */
	public record Invocation(Instant at, long retryCount, boolean succeeded, @Nullable MessageProperties properties) {

		public @Nullable Object header(String name) {
			return (this.properties != null) ? this.properties.getHeaders().get(name) : null;
		}

	}

	public void record(String messageId, long retryCount, boolean succeeded) {
		add(messageId, new Invocation(Instant.now(), retryCount, succeeded, null));
	}

	/**
	 * Record an invocation under the message's id, with its properties.
	 * @param message the message the listener was given
	 * @param succeeded whether the listener returned normally
	 */
	public void record(Message message, boolean succeeded) {
		MessageProperties properties = message.getMessageProperties();
		add(String.valueOf(properties.getMessageId()),
				new Invocation(Instant.now(), properties.getRetryCount(), succeeded, properties));
	}

	private void add(String messageId, Invocation invocation) {
		this.invocations.computeIfAbsent(messageId, (id) -> new CopyOnWriteArrayList<>()).add(invocation);
		this.onInvocation.accept(messageId, invocation);
	}

	/**
	 * Run something on the listener's thread whenever an invocation is recorded, before
	 * the listener returns or throws: a test can break the network at that very moment.
	 * @param action what to run, given the message id and the invocation
	 */
	public void onInvocation(BiConsumer<String, Invocation> action) {
		this.onInvocation = action;
	}

	public List<Invocation> of(String messageId) {
		return this.invocations.getOrDefault(messageId, List.of());
	}

	/**
	 * The retry count each invocation of a message saw.
	 * @param messageId the message id
	 * @return the retry counts, in order
	 */
	public List<Long> retryCounts(String messageId) {
		return of(messageId).stream().map(Invocation::retryCount).toList();
	}

	public int count(String messageId) {
		return of(messageId).size();
	}

	public boolean succeeded(String messageId) {
		return of(messageId).stream().anyMatch(Invocation::succeeded);
	}

	public long successes(String messageId) {
		return of(messageId).stream().filter(Invocation::succeeded).count();
	}

	public @Nullable Instant firstSuccess(String messageId) {
		return of(messageId).stream().filter(Invocation::succeeded).map(Invocation::at).findFirst().orElse(null);
	}

	/**
	 * The gaps between consecutive invocations of a message.
	 * @param messageId the message id
	 * @return the gaps
	 */
	public List<Duration> gaps(String messageId) {
		List<Invocation> list = of(messageId);
		List<Duration> gaps = new ArrayList<>();
		for (int i = 1; i < list.size(); i++) {
			gaps.add(Duration.between(list.get(i - 1).at(), list.get(i).at()));
		}
		return gaps;
	}

	/**
	 * Invocations of all messages.
	 * @return the count
	 */
	public int total() {
		return this.invocations.values().stream().mapToInt(List::size).sum();
	}

	public Map<String, List<Invocation>> all() {
		return this.invocations;
	}

}
