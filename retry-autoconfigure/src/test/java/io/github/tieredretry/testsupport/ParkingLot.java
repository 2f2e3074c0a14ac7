package io.github.tieredretry.testsupport;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.tieredretry.headers.RetryHeaders;
import org.jspecify.annotations.Nullable;

import static org.awaitility.Awaitility.await;

/**
 * Reads a parking lot in tests: drains it and keeps every copy it found, by message id.
 */
public final class ParkingLot {

	private final BrokerClient broker;

	private final String queue;

	private final Map<String, List<BrokerClient.Received>> parked = new ConcurrentHashMap<>();

	public ParkingLot(BrokerClient broker, String queue) {
		this.broker = broker;
		this.queue = queue;
	}

	/**
	 * The copies of a message parked so far.
	 * @param id the message id
	 * @return the copies, oldest first
	 */
	public List<BrokerClient.Received> copies(String id) {
		drain();
		return this.parked.getOrDefault(id, List.of());
	}

	public boolean contains(String id) {
		return !copies(id).isEmpty();
	}

	/**
	 * The one copy of a message that must have been parked exactly once.
	 * @param id the message id
	 * @return the parked message
	 */
	public BrokerClient.Received single(String id) {
		List<BrokerClient.Received> copies = copies(id);
		if (copies.size() != 1) {
			throw new AssertionError("Expected message " + id + " parked once, but found " + copies.size() + " copies");
		}
		return copies.get(0);
	}

	/**
	 * Wait until a message is parked.
	 * @param id the message id
	 * @param atMost how long it may take
	 * @return its first parked copy
	 */
	public BrokerClient.Received awaitParked(String id, Duration atMost) {
		await().atMost(atMost).until(() -> contains(id));
		return copies(id).get(0);
	}

	/**
	 * Wait until a message is parked, which must then have been parked exactly once.
	 * @param id the message id
	 * @param atMost how long it may take
	 * @return the parked message
	 */
	public BrokerClient.Received awaitSingle(String id, Duration atMost) {
		await().atMost(atMost).until(() -> contains(id));
		return single(id);
	}

	/**
	 * The first parked copy of a message, if it has arrived.
	 * @param id the message id
	 * @return the message or {@code null}
	 */
	public BrokerClient.@Nullable Received find(String id) {
		List<BrokerClient.Received> copies = copies(id);
		return copies.isEmpty() ? null : copies.get(0);
	}

	/**
	 * The first parked copy of every message parked so far.
	 * @return message id to message
	 */
	public Map<String, BrokerClient.Received> all() {
		drain();
		Map<String, BrokerClient.Received> first = new LinkedHashMap<>();
		this.parked.forEach((id, copies) -> first.put(id, copies.get(0)));
		return first;
	}

	/**
	 * Every message parked so far from a work queue (its first copy).
	 * @param workQueue the queue that failed
	 * @return the parked messages
	 */
	public List<BrokerClient.Received> from(String workQueue) {
		return all().values()
			.stream()
			.filter((message) -> workQueue.equals(message.header(RetryHeaders.QUEUE)))
			.toList();
	}

	private void drain() {
		this.broker.drain(this.queue)
			.forEach((message) -> this.parked.computeIfAbsent(idOf(message), (id) -> new CopyOnWriteArrayList<>())
				.add(message));
	}

	private static String idOf(BrokerClient.Received message) {
		String id = message.properties().getMessageId();
		return (id != null) ? id : "delivery-" + message.deliveryTag();
	}

}
