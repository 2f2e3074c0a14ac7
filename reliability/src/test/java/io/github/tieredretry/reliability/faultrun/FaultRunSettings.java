package io.github.tieredretry.reliability.faultrun;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import io.github.tieredretry.topology.QueueType;

/**
 * How big and how long a fault run is. The defaults are the CI variant; the long run changes the number
 * of messages with {@code -Dreliability.messages=100000}.
 *
 * @param messages how many uniquely identified messages to publish
 * @param queueType the type of the tier queues, the parking lot and the work queue
 * @param seed makes the distribution of fault plans over the messages reproducible
 * @param workDirectory where the broker node, journals and consumer logs go
 * @param consumerConcurrency listener threads of the consuming application
 * @param producerWindow how far the producer may run ahead of the consumer's outcomes
 * @param stallTimeout how long without any outcome counts as "nothing more will come"
 * @param crashBroker whether the broker fault is a crash (SIGKILL, then start) rather than a clean
 * {@code stop_app}/{@code start_app}
 */
record FaultRunSettings(int messages, QueueType queueType, long seed, Path workDirectory, int consumerConcurrency,
		int producerWindow, Duration stallTimeout, boolean crashBroker) {

	static final String MESSAGES = "reliability.messages";

	static final String QUEUE_TYPES = "reliability.queue-types";

	static final String SEED = "reliability.seed";

	static final String WORK_DIRECTORY = "reliability.work-dir";

	/** {@code restart} (default: {@code stop_app}/{@code start_app}) or {@code crash} (SIGKILL, then start). */
	static final String BROKER_FAULT = "reliability.broker-fault";

	static FaultRunSettings fromSystemProperties(QueueType queueType) {
		return new FaultRunSettings(Integer.getInteger(MESSAGES, 20_000), queueType, Long.getLong(SEED, 20240611L),
				defaultWorkDirectory(), Integer.getInteger("reliability.consumer-concurrency", 4),
				Integer.getInteger("reliability.producer-window", 2_000), Duration.ofSeconds(60),
				"crash".equals(System.getProperty(BROKER_FAULT, "restart")));
	}

	static Path defaultWorkDirectory() {
		return Path.of(System.getProperty(WORK_DIRECTORY, "target/fault-run")).toAbsolutePath();
	}

	/**
	 * The queue types to run with, from {@code -Dreliability.queue-types=classic,quorum}.
	 * @return the queue types
	 */
	static List<QueueType> queueTypes() {
		return Arrays.stream(System.getProperty(QUEUE_TYPES, "classic,quorum").split(","))
			.map(String::trim)
			.filter((name) -> !name.isEmpty())
			.map((name) -> QueueType.valueOf(name.toUpperCase(Locale.ROOT)))
			.toList();
	}

}
