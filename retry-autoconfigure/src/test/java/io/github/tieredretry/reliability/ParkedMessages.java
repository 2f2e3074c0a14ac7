package io.github.tieredretry.reliability;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.tieredretry.testsupport.BrokerClient;

/**
 * Reads a test's own parking lot: takes whatever has arrived and keeps it by message id.
 */
final class ParkedMessages {

	private final BrokerClient broker;

	private final String parkingLot;

	private final Map<String, List<BrokerClient.Received>> byId = new ConcurrentHashMap<>();

	ParkedMessages(BrokerClient broker, String parkingLot) {
		this.broker = broker;
		this.parkingLot = parkingLot;
	}

	/**
	 * The copies of a message parked so far.
	 * @param id the message id
	 * @return the copies, oldest first
	 */
	List<BrokerClient.Received> of(String id) {
		for (BrokerClient.Received message : this.broker.drain(this.parkingLot)) {
			String messageId = String.valueOf(message.properties().getMessageId());
			this.byId.computeIfAbsent(messageId, (key) -> new CopyOnWriteArrayList<>()).add(message);
		}
		return this.byId.getOrDefault(id, List.of());
	}

	boolean contains(String id) {
		return !of(id).isEmpty();
	}

	BrokerClient.Received single(String id) {
		List<BrokerClient.Received> copies = of(id);
		if (copies.size() != 1) {
			throw new AssertionError("Expected message " + id + " parked once, but found " + copies.size() + " copies");
		}
		return copies.get(0);
	}

}
