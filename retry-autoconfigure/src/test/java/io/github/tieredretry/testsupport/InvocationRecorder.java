package io.github.tieredretry.testsupport;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Records listener invocations per message id, with the time and the retry count the listener saw.
 */
public final class InvocationRecorder {

	private final Map<String, List<Invocation>> invocations = new ConcurrentHashMap<>();

	/**
	 * One invocation.
	 *
	 * @param at when
	 * @param retryCount the retry count the listener saw
	 * @param succeeded whether the listener returned normally
	 */
	public record Invocation(Instant at, long retryCount, boolean succeeded) {
	}

	public void record(String messageId, long retryCount, boolean succeeded) {
		this.invocations.computeIfAbsent(messageId, (id) -> new CopyOnWriteArrayList<>())
			.add(new Invocation(Instant.now(), retryCount, succeeded));
	}

	public List<Invocation> of(String messageId) {
		return this.invocations.getOrDefault(messageId, List.of());
	}

	public int count(String messageId) {
		return of(messageId).size();
	}

	public boolean succeeded(String messageId) {
		return of(messageId).stream().anyMatch(Invocation::succeeded);
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

	public Map<String, List<Invocation>> all() {
		return this.invocations;
	}

}
