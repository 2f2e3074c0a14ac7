package io.github.tieredretry.reliability;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import org.jspecify.annotations.Nullable;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;

/**
 * What a test listener saw, per message id: every invocation, in order.
 */
final class Deliveries {

	/**
	 * One invocation of a listener.
	 *
	 * @param at when
	 * @param retryCount the retry count the listener saw
	 * @param succeeded whether the listener returned normally
	 * @param properties the message properties it was given
	 */
	record Delivery(Instant at, long retryCount, boolean succeeded, MessageProperties properties) {

		@Nullable Object header(String name) {
			return this.properties.getHeaders().get(name);
		}

	}

	private final Map<String, List<Delivery>> byId = new ConcurrentHashMap<>();

	void record(Message message, boolean succeeded) {
		MessageProperties properties = message.getMessageProperties();
		String id = String.valueOf(properties.getMessageId());
		this.byId.computeIfAbsent(id, (key) -> new CopyOnWriteArrayList<>())
			.add(new Delivery(Instant.now(), properties.getRetryCount(), succeeded, properties));
	}

	List<Delivery> of(String id) {
		return this.byId.getOrDefault(id, List.of());
	}

	int count(String id) {
		return of(id).size();
	}

	long successes(String id) {
		return of(id).stream().filter(Delivery::succeeded).count();
	}

	@Nullable Instant firstSuccess(String id) {
		return of(id).stream().filter(Delivery::succeeded).map(Delivery::at).findFirst().orElse(null);
	}

	List<Duration> gaps(String id) {
		List<Delivery> deliveries = of(id);
		List<Duration> gaps = new ArrayList<>();
		for (int i = 1; i < deliveries.size(); i++) {
			gaps.add(Duration.between(deliveries.get(i - 1).at(), deliveries.get(i).at()));
		}
		return gaps;
	}

	int total() {
		return this.byId.values().stream().mapToInt(List::size).sum();
	}

}
