package io.github.tieredretry.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Collectors;

import io.github.tieredretry.benchmarks.app.BenchmarkApplication;
import io.github.tieredretry.benchmarks.app.BenchmarkListeners;
import io.github.tieredretry.benchmarks.broker.BrokerOperations;
import io.github.tieredretry.benchmarks.broker.MessagePublisher;
import io.github.tieredretry.policy.TierLadder;
import io.github.tieredretry.topology.RetryTopology;

/**
 * What the benchmarks of one run share: settings, broker access, and the applications under measurement,
 * each started on first use and closed at the end of the run.
 */
final class RunContext implements AutoCloseable {

	/** Application with {@code @RetryableListener}s. */
	static final String TIERED = "tiered";

	/** Application with plain {@code @RabbitListener}s. */
	static final String PLAIN = "plain";

	/** Application with Spring AMQP's blocking retry (Spring Boot's listener retry properties). */
	static final String BLOCKING = "blocking";

	/** Application with Spring AMQP's blocking retry and {@code RepublishMessageRecovererWithConfirms}. */
	static final String RECOVERER = "recoverer";

	private static final List<String> LISTENERS = List.of(BenchmarkListeners.HAPPY, BenchmarkListeners.STORM,
			BenchmarkListeners.FORWARDING, BenchmarkListeners.ACCURACY);

	private final BenchmarkSettings settings;

	private final String runId;

	private final BrokerOperations broker;

	private final MessagePublisher publisher;

	private final Consumer<String> log;

	private final Map<String, RunningApplication> applications = new LinkedHashMap<>();

	RunContext(BenchmarkSettings settings, String runId, BrokerOperations broker, MessagePublisher publisher,
			Consumer<String> log) {
		this.settings = settings;
		this.runId = runId;
		this.broker = broker;
		this.publisher = publisher;
		this.log = log;
	}

	BenchmarkSettings settings() {
		return this.settings;
	}

	String runId() {
		return this.runId;
	}

	BrokerOperations broker() {
		return this.broker;
	}

	MessagePublisher publisher() {
		return this.publisher;
	}

	void log(String line) {
		this.log.accept(line);
	}

	/**
	 * The queue of a listener of an application: unique to this run.
	 * @param application the application
	 * @param listener the listener
	 * @return the queue's name
	 */
	String queue(String application, String listener) {
		return this.runId + "-" + application + "-" + listener;
	}

	/**
	 * A side of a comparison: the listener of an application, its queue declared for this run.
	 * @param label the label in the report
	 * @param application the application
	 * @param listener the listener
	 * @return the side
	 */
	ListenerSide side(String label, String application, String listener) {
		RunningApplication running = application(application);
		return new ListenerSide(label, running, listener, queue(application, listener));
	}

	/**
	 * How long a round may take at most before the harness gives up on it.
	 * @param messages the messages of the round
	 * @return the timeout
	 */
	static Duration roundTimeout(int messages) {
		return Duration.ofSeconds(60).plusMillis(messages * 10L);
	}

	synchronized RunningApplication application(String name) {
		RunningApplication running = this.applications.get(name);
		if (running == null) {
			running = start(name);
			this.applications.put(name, running);
		}
		return running;
	}

	private RunningApplication start(String name) {
		Map<String, String> properties = commonProperties(name);
		List<String> usedListeners = new ArrayList<>();
		switch (name) {
			case TIERED -> {
				properties.put("benchmarks.listeners", "retryable");
				properties.put("retry.enabled", "true");
				List<String> tiers = List.of(TierLadder.nameOf(BenchmarkSettings.STORM_DELAYS.get(0)),
						TierLadder.nameOf(BenchmarkSettings.STORM_DELAYS.get(1)),
						TierLadder.nameOf(BenchmarkSettings.FORWARDING_TIER));
				properties.put("retry.tiers", String.join(",", tiers));
				String parkingLot = this.runId + "-parking-lot";
				properties.put("retry.parking-lot", parkingLot);
				String stormDelays = BenchmarkSettings.STORM_DELAYS.stream().map(TierLadder::nameOf)
					.collect(Collectors.joining(","));
				properties.put("retry.policies.storm.max-retries", String.valueOf(BenchmarkSettings.STORM_FAILING_ATTEMPTS));
				properties.put("retry.policies.storm.delays", stormDelays);
				properties.put("retry.policies.forwarding.max-retries", "1");
				properties.put("retry.policies.forwarding.delays", TierLadder.nameOf(BenchmarkSettings.FORWARDING_TIER));
				properties.put("retry.policies.accuracy.max-retries", "1");
				properties.put("retry.policies.accuracy.delays", TierLadder.nameOf(BenchmarkSettings.ACCURACY_TIER));
				this.broker.noteSharedObjects(tiers.stream().map((tier) -> RetryTopology.TIER_QUEUE_PREFIX + tier).toList(),
						List.of(RetryTopology.DELAY_EXCHANGE, RetryTopology.RETURN_EXCHANGE,
								RetryTopology.UNROUTABLE_EXCHANGE));
				this.broker.ownQueueDeclaredElsewhere(parkingLot);
				usedListeners.addAll(LISTENERS);
			}
			case PLAIN -> {
				properties.put("benchmarks.listeners", "plain");
				usedListeners.add(BenchmarkListeners.HAPPY);
			}
			case BLOCKING -> {
				properties.put("benchmarks.listeners", "plain");
				properties.put("spring.rabbitmq.listener.simple.retry.enabled", "true");
				properties.put("spring.rabbitmq.listener.simple.retry.max-retries",
						String.valueOf(BenchmarkSettings.STORM_FAILING_ATTEMPTS));
				properties.put("spring.rabbitmq.listener.simple.retry.initial-interval",
						BenchmarkSettings.STORM_DELAYS.get(0).toMillis() + "ms");
				properties.put("spring.rabbitmq.listener.simple.retry.multiplier", "2");
				properties.put("spring.rabbitmq.listener.simple.retry.max-interval",
						BenchmarkSettings.STORM_DELAYS.get(1).toMillis() + "ms");
				usedListeners.add(BenchmarkListeners.STORM);
			}
			case RECOVERER -> {
				properties.put("benchmarks.listeners", "plain");
				properties.put("spring.rabbitmq.listener.simple.retry.enabled", "true");
				properties.put("spring.rabbitmq.listener.simple.retry.max-retries", "0");
				properties.put("benchmarks.recoverer.enabled", "true");
				properties.put("benchmarks.recoverer.routing-key", queue(RECOVERER, BenchmarkListeners.FORWARDING));
				properties.put("benchmarks.recoverer.tier", TierLadder.nameOf(BenchmarkSettings.FORWARDING_TIER));
				usedListeners.add(BenchmarkListeners.FORWARDING);
			}
			default -> throw new IllegalArgumentException("Unknown application " + name);
		}
		// Work queues exist before the application starts, so that the starter's return bindings find them.
		usedListeners.forEach((listener) -> this.broker.declareOwnQueue(queue(name, listener)));
		this.log.accept("Starting application '" + name + "'");
		return RunningApplication.start(name, BenchmarkApplication.class, properties);
	}

	/**
	 * Properties every application gets: the broker, the listener queues, and the same container settings.
	 */
	Map<String, String> commonProperties(String application) {
		Map<String, String> properties = new LinkedHashMap<>(this.settings.broker().springProperties());
		properties.put("spring.application.name", "benchmarks-" + application);
		properties.put("logging.level.root", "WARN");
		// RepublishMessageRecoverer logs every republish at WARN (under the class of the instance): that is
		// console output, not forwarding, so the recoverer is measured without it.
		properties.put("logging.level.org.springframework.amqp.rabbit.retry", "ERROR");
		properties.put("logging.level.io.github.tieredretry.benchmarks.app", "ERROR");
		properties.put("retry.enabled", "false");
		properties.put("benchmarks.listener-work", this.settings.listenerWork().toNanos() + "ns");
		properties.put("spring.rabbitmq.listener.type", "simple");
		properties.put("spring.rabbitmq.listener.simple.concurrency", String.valueOf(this.settings.concurrency()));
		properties.put("spring.rabbitmq.listener.simple.max-concurrency", String.valueOf(this.settings.concurrency()));
		properties.put("spring.rabbitmq.listener.simple.prefetch", String.valueOf(this.settings.prefetch()));
		for (String listener : LISTENERS) {
			properties.put("benchmarks.queue." + listener, queue(application, listener));
		}
		return properties;
	}

	/**
	 * Remove this run's messages from the forwarding tier, which nobody else shares: left there, they would
	 * come back after the tier's TTL to work queues that no longer exist.
	 */
	void purgeForwardingTier() {
		String tier = RetryTopology.tierQueueName(BenchmarkSettings.FORWARDING_TIER);
		if (this.broker.queueExists(tier)) {
			this.broker.purge(tier);
		}
	}

	@Override
	public void close() {
		List<RuntimeException> failures = new ArrayList<>();
		for (RunningApplication application : this.applications.values()) {
			try {
				application.close();
			}
			catch (RuntimeException ex) {
				failures.add(ex);
			}
		}
		this.applications.clear();
		if (!failures.isEmpty()) {
			throw failures.get(0);
		}
	}

}
