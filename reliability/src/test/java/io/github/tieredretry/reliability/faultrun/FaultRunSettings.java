package io.github.tieredretry.reliability.faultrun;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import io.github.tieredretry.topology.QueueType;

/**
 * How big and how long a fault run is, and what happens in it. The defaults are the CI
 * variants; the long runs change the number of messages with
 * {@code -Dreliability.messages=100000} (single node) or
 * {@code -Dreliability.cluster.messages=100000} (cluster).
 *
 * @param messages how many uniquely identified messages to publish
 * @param queueType the type of the tier queues, the parking lot and the work queue
 * @param brokerBackend whether the retries run on the broker backend (RabbitMQ 4.3: the
 * work queue's delayed retry holds them) instead of the tiers
 * @param seed makes the distribution of fault plans over the messages reproducible
 * @param workDirectory where the broker node, journals and consumer logs go
 * @param consumerConcurrency listener threads of the consuming application
 * @param producerWindow how far the producer may run ahead of the consumer's outcomes
 * @param publishRate the most messages the producer publishes per second, or 0 for no
 * limit
 * @param stallTimeout how long without any outcome counts as "nothing more will come"
 * @param crashBroker whether the broker fault is a crash (SIGKILL, then start) rather
 * than a clean {@code stop_app}/{@code start_app}
 * @param consumerInstances how many instances of the consuming application run side by
 * side
 * @param http whether each instance serves its actuator endpoints over HTTP
 * @param schedule the faults
 * @param batchSize 0 for a listener of single messages, or the size of the batches of a
 * batch listener with consumer-side batching
 */
record FaultRunSettings(int messages, QueueType queueType, boolean brokerBackend, long seed, Path workDirectory,
		int consumerConcurrency, int producerWindow, int publishRate, Duration stallTimeout, boolean crashBroker,
		int consumerInstances, boolean http, List<FaultRun.ScheduledFault> schedule, int batchSize) {

	static final String BATCH_MESSAGES = "reliability.batch.messages";

	static final String CLUSTER_MESSAGES = "reliability.cluster.messages";

	static final String CLUSTER_WORK_DIRECTORY = "reliability.cluster.work-dir";

	static final String MESSAGES = "reliability.messages";

	static final String QUEUE_TYPES = "reliability.queue-types";

	static final String SEED = "reliability.seed";

	/** The variant whose retries run on the broker backend. */
	static final String BROKER_VARIANT = "broker";

	static final String WORK_DIRECTORY = "reliability.work-dir";

	/**
	 * {@code restart} (default: {@code stop_app}/{@code start_app}) or {@code crash}
	 * (SIGKILL, then start).
	 */
	static final String BROKER_FAULT = "reliability.broker-fault";

	/**
	 * The variant of the single-node run named as in {@value #QUEUE_TYPES}.
	 * @param variant {@code classic}, {@code quorum} (tiers of that type) or
	 * {@code broker} (quorum tiers, retries on the broker backend)
	 * @return the settings
	 */
	static FaultRunSettings fromSystemProperties(String variant) {
		boolean broker = variant.equals(BROKER_VARIANT);
		QueueType queueType = broker ? QueueType.QUORUM : QueueType.valueOf(variant.toUpperCase(Locale.ROOT));
		return new FaultRunSettings(Integer.getInteger(MESSAGES, 20_000), queueType, broker,
				Long.getLong(SEED, 20240611L), defaultWorkDirectory(), defaultConsumerConcurrency(),
				defaultProducerWindow(), 0, Duration.ofSeconds(60),
				"crash".equals(System.getProperty(BROKER_FAULT, "restart")), 1, false, FaultRun.SINGLE_NODE_SCHEDULE,
				0);
	}

	/**
	 * The run with a batch listener: quorum tiers, batches of 25 messages from the
	 * container's consumer-side batching, the single node's faults.
	 * @return the settings
	 */
	static FaultRunSettings forBatchListenerFromSystemProperties() {
		return new FaultRunSettings(Integer.getInteger(BATCH_MESSAGES, 10_000), QueueType.QUORUM, false,
				Long.getLong(SEED, 20240611L), defaultWorkDirectory().resolve("batch"), defaultConsumerConcurrency(),
				defaultProducerWindow(), 0, Duration.ofSeconds(60),
				"crash".equals(System.getProperty(BROKER_FAULT, "restart")), 1, false, FaultRun.SINGLE_NODE_SCHEDULE,
				25);
	}

	/**
	 * The cluster run: quorum queues, two consumer instances serving HTTP, the cluster's
	 * faults.
	 * @return the settings
	 */
	static FaultRunSettings forClusterFromSystemProperties() {
		int messages = Integer.getInteger(CLUSTER_MESSAGES, 10_000);
		// Publishing is spread over at least 100 s: the node faults take the cluster
		// about a minute, and they must all happen while messages flow.
		int rate = Integer.getInteger("reliability.cluster.publish-rate", Math.max(100, messages / 100));
		return new FaultRunSettings(messages, QueueType.QUORUM, false, Long.getLong(SEED, 20240611L),
				clusterWorkDirectory(), defaultConsumerConcurrency(), defaultProducerWindow(), rate,
				Duration.ofSeconds(60), false, 2, true, FaultRun.CLUSTER_SCHEDULE, 0);
	}

	static Path defaultWorkDirectory() {
		return Path.of(System.getProperty(WORK_DIRECTORY, "target/fault-run")).toAbsolutePath();
	}

	static Path clusterWorkDirectory() {
		return Path.of(System.getProperty(CLUSTER_WORK_DIRECTORY, "target/cluster-run")).toAbsolutePath();
	}

	private static int defaultConsumerConcurrency() {
		return Integer.getInteger("reliability.consumer-concurrency", 4);
	}

	private static int defaultProducerWindow() {
		return Integer.getInteger("reliability.producer-window", 2_000);
	}

	/**
	 * The variants to run, from {@code -Dreliability.queue-types=classic,quorum,broker}:
	 * classic or quorum tiers, and the broker backend (on RabbitMQ 4.3 or later only:
	 * before, the broker cannot hold retries).
	 * @param brokerVersion the harness broker's version
	 * @return the variants
	 */
	static List<String> variants(String brokerVersion) {
		boolean delayedRetry = atLeast43(brokerVersion);
		return Arrays.stream(System.getProperty(QUEUE_TYPES, "classic,quorum,broker").split(","))
			.map((name) -> name.trim().toLowerCase(Locale.ROOT))
			.filter((name) -> !name.isEmpty())
			.filter((name) -> !name.equals(BROKER_VARIANT) || delayedRetry)
			.toList();
	}

	private static boolean atLeast43(String version) {
		String[] parts = version.split("\\.");
		int major = Integer.parseInt(parts[0]);
		return major > 4 || (major == 4 && parts.length > 1 && Integer.parseInt(parts[1]) >= 3);
	}

	/**
	 * The name of the run: {@code classic}, {@code quorum} or {@code broker}.
	 * @return the name
	 */
	String variant() {
		return this.brokerBackend ? BROKER_VARIANT : this.queueType.name().toLowerCase(Locale.ROOT);
	}

}
