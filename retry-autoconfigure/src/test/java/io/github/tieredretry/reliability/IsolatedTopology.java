package io.github.tieredretry.reliability;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

import io.github.tieredretry.topology.RetryTopology;
import io.github.tieredretry.testsupport.BrokerClient;

/**
 * Names that belong to one test class alone, so that tests can share one broker with other suites:
 * queues with a unique suffix, a parking lot of its own, and delay tiers with odd millisecond values
 * that nobody else declares and that do not exist yet (tier queue names are global on a virtual host,
 * and a test that deletes a tier queue or declares it as another queue type must not disturb anybody's
 * retries).
 */
final class IsolatedTopology {

	/** Tiers handed out in this JVM: two test classes must never share (and delete) a tier queue. */
	private static final Set<Long> taken = ConcurrentHashMap.newKeySet();

	private final String id = UUID.randomUUID().toString().substring(0, 8);

	private final Duration shortTier;

	private final Duration longTier;

	IsolatedTopology() {
		long millis;
		try (BrokerClient client = new BrokerClient()) {
			do {
				// e.g. 437ms and 2437ms: never a round number, so never somebody else's tier.
				millis = ThreadLocalRandom.current().nextLong(301, 1300);
			}
			while (millis % 10 == 0 || !taken.add(millis)
					|| client.queueExists(RetryTopology.tierQueueName(Duration.ofMillis(millis)))
					|| client.queueExists(RetryTopology.tierQueueName(Duration.ofMillis(2000 + millis))));
		}
		this.shortTier = Duration.ofMillis(millis);
		this.longTier = Duration.ofMillis(2000 + millis);
	}

	String id() {
		return this.id;
	}

	String queue(String purpose) {
		return "reliability-" + purpose + "-" + this.id;
	}

	String parkingLot() {
		return queue("parking-lot");
	}

	Duration shortTier() {
		return this.shortTier;
	}

	Duration longTier() {
		return this.longTier;
	}

	String shortTierQueue() {
		return RetryTopology.tierQueueName(this.shortTier);
	}

	String longTierQueue() {
		return RetryTopology.tierQueueName(this.longTier);
	}

	/**
	 * The {@code retry.tiers} value.
	 * @return both tiers, ascending
	 */
	String tiers() {
		return this.shortTier.toMillis() + "ms, " + this.longTier.toMillis() + "ms";
	}

	/**
	 * Delete the tier queues and the parking lot, and the given work queues.
	 * @param workQueues the work queues
	 */
	void delete(String... workQueues) {
		try (BrokerClient client = new BrokerClient()) {
			for (String queue : List.of(shortTierQueue(), longTierQueue(), parkingLot())) {
				client.deleteQueue(queue);
			}
			for (String queue : workQueues) {
				client.deleteQueue(queue);
			}
		}
	}

}
