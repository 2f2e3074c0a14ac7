package io.github.tieredretry.testsupport;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.tieredretry.headers.RetryHeaders;

/**
 * Reads a parking lot in tests: drains it and keeps what it found, by message id.
 */
public final class ParkingLot {

	private final BrokerClient broker;

	private final String queue;

	private final Map<String, BrokerClient.Received> parked = new ConcurrentHashMap<>();

	public ParkingLot(BrokerClient broker, String queue) {
		this.broker = broker;
		this.queue = queue;
	}

	/**
	 * Every message parked so far from a work queue.
	 * @param workQueue the queue that failed
	 * @return the parked messages
	 */
	public List<BrokerClient.Received> from(String workQueue) {
		this.broker.drain(this.queue).forEach((message) -> this.parked.put(idOf(message), message));
		return this.parked.values().stream().filter((message) -> workQueue.equals(message.header(RetryHeaders.QUEUE))).toList();
	}

	/**
	 * The parked message with the given id, if it has arrived.
	 * @param id the message id
	 * @return the message or {@code null}
	 */
	public BrokerClient.Received find(String id) {
		this.broker.drain(this.queue).forEach((message) -> this.parked.put(idOf(message), message));
		return this.parked.get(id);
	}

	public Map<String, BrokerClient.Received> all() {
		this.broker.drain(this.queue).forEach((message) -> this.parked.put(idOf(message), message));
		return this.parked;
	}

	private static String idOf(BrokerClient.Received message) {
		String id = message.properties().getMessageId();
		return (id != null) ? id : "delivery-" + message.deliveryTag();
	}

}
