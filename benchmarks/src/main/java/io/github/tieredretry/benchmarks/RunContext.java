package io.github.tieredretry.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Collectors;

import io.github.tieredretry.benchmarks.app.BenchmarkApplication;
import io.github.tieredretry.benchmarks.app.BenchmarkListeners;
import io.github.tieredretry.benchmarks.app.Workloads;
import io.github.tieredretry.benchmarks.broker.BrokerOperations;
import io.github.tieredretry.benchmarks.broker.MessagePublisher;
import io.github.tieredretry.benchmarks.limit.MinimalRetryingConsumer;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.topology.QueueType;

/**
 * What the benchmarks of one run share: settings, broker access, and the applications and
 * limit-side consumers under measurement, each started on first use and closed at the end
 * of the run.
 */
final class RunContext implements AutoCloseable {

	/**
	 * Prefix of the applications with {@code @RetryableListener}s, one per tier type:
	 * {@link #tiered}.
	 */
	private static final String TIERED_PREFIX = "tiered-";

	/** Prefix of the queues of the limit sides, one set per tier type. */
	private static final String LIMIT_PREFIX = "limit-";

	/** Application with plain {@code @RabbitListener}s. */
	static final String PLAIN = "plain";

	/**
	 * Application with Spring AMQP's blocking retry (Spring Boot's listener retry
	 * properties).
	 */
	static final String BLOCKING = "blocking";

	/**
	 * Application with Spring AMQP's blocking retry and
	 * {@code RepublishMessageRecovererWithConfirms}.
	 */
	static final String RECOVERER = "recoverer";

	/**
	 * Application with {@code @RetryableListener}s and quorum tiers whose listener
	 * containers and template observe (Spring Boot's {@code observation-enabled}
	 * properties), without a tracer.
	 */
	static final String OBSERVED = "observed";

	/**
	 * The same, with Spring Boot's OpenTelemetry tracer recording every message's spans.
	 */
	static final String TRACED = "traced";

	/**
	 * Application with the outage benchmark's two {@code @RetryableListener}s, with a
	 * circuit breaker and without, and quorum tiers.
	 */
	static final String OUTAGE = "outage";

	/**
	 * Application with the jitter benchmark's two {@code @RetryableListener}s, with
	 * jitter and without, and quorum tiers.
	 */
	static final String JITTER = "jitter";

	/**
	 * Application with the broker-backend benchmark's {@code @RetryableListener}s, each
	 * on the tiers and on the broker backend, and its delay-accuracy listener on the
	 * RabbitMQ AMQP 1.0 client too, on quorum work queues it declares; started on
	 * RabbitMQ 4.3 or later only.
	 */
	static final String BROKER_BACKEND = "broker-backend";

	/**
	 * Application whose {@code DelayedSender} the delayed-send benchmark measures, with
	 * tiers of its own and no listener; its {@code RabbitTemplate} publishes with
	 * correlated confirms, mandatory, for the plain sides beside it.
	 */
	static final String DELAYED_SEND = "delayed-send";

	/**
	 * Application with the AMQP 1.0 listener benchmark's listener on the RabbitMQ AMQP
	 * 1.0 client, plain and with {@code @RetryableListener} (quorum tiers); started on
	 * RabbitMQ 4.0 or later only.
	 */
	static final String AMQP_LISTENER = "amqp-listener";

	/**
	 * The broker-backend benchmark's listeners, on the tiers and on the broker, and on
	 * the AMQP 1.0 client.
	 */
	static final List<String> BROKER_BACKEND_LISTENERS = List.of(BenchmarkListeners.BACKEND_STORM_TIERS,
			BenchmarkListeners.BACKEND_STORM_BROKER, BenchmarkListeners.BACKEND_FORWARDING_TIERS,
			BenchmarkListeners.BACKEND_FORWARDING_BROKER, BenchmarkListeners.BACKEND_ACCURACY_TIERS,
			BenchmarkListeners.BACKEND_ACCURACY_BROKER, BenchmarkListeners.BACKEND_ACCURACY_AMQP);

	/**
	 * Spring Boot's tracing auto-configurations, which only {@link #TRACED} keeps: on the
	 * class path of every application of the run, they would give the others a tracer
	 * too.
	 */
	private static final String TRACING_AUTO_CONFIGURATIONS = String.join(",",
			"org.springframework.boot.micrometer.tracing.opentelemetry.autoconfigure.OpenTelemetryTracingAutoConfiguration",
			"org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration",
			"org.springframework.boot.micrometer.tracing.autoconfigure.NoopTracerAutoConfiguration",
			"org.springframework.boot.opentelemetry.autoconfigure.OpenTelemetrySdkAutoConfiguration");

	private static final List<String> LISTENERS = List.of(BenchmarkListeners.HAPPY, BenchmarkListeners.STORM,
			BenchmarkListeners.FORWARDING, BenchmarkListeners.ACCURACY, BenchmarkListeners.BATCH);

	/** The retryable listeners' policies, named after the listeners that use them. */
	private static final List<String> POLICIES = List.of(BenchmarkListeners.STORM, BenchmarkListeners.FORWARDING,
			BenchmarkListeners.ACCURACY);

	private final BenchmarkSettings settings;

	private final String runId;

	private final BrokerOperations broker;

	private final MessagePublisher publisher;

	private final Consumer<String> log;

	private final Map<String, RunningApplication> applications = new LinkedHashMap<>();

	private final Map<String, MinimalRetryingConsumer> limitConsumers = new LinkedHashMap<>();

	/** The limit sides' workloads (the applications have their own). */
	private final Workloads limitWorkloads;

	RunContext(BenchmarkSettings settings, String runId, BrokerOperations broker, MessagePublisher publisher,
			Consumer<String> log) {
		this.settings = settings;
		this.runId = runId;
		this.broker = broker;
		this.publisher = publisher;
		this.log = log;
		this.limitWorkloads = new Workloads(settings.listenerWork());
	}

	/**
	 * The application with {@code @RetryableListener}s whose tiers are of a type.
	 * @param type the tier queue type
	 * @return the application's name
	 */
	static String tiered(QueueType type) {
		return TIERED_PREFIX + BenchmarkSettings.typeName(type);
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
	 * A side of a comparison: the listener of an application, its queue declared for this
	 * run.
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
	 * A limit side: a consumer written against the RabbitMQ Java client, on a queue of
	 * its own, forwarding failures with the delays of the same listener's policy into the
	 * tiers of the given type, which the application with {@code @RetryableListener}s of
	 * that type declares.
	 * @param label the label in the report
	 * @param type the tier queue type
	 * @param listener the listener whose policy it follows
	 * @return the side
	 */
	synchronized LimitSide limitSide(String label, QueueType type, String listener) {
		application(tiered(type));
		String queue = queue(LIMIT_PREFIX + BenchmarkSettings.typeName(type), listener);
		MinimalRetryingConsumer consumer = this.limitConsumers.get(queue);
		if (consumer == null) {
			this.broker.declareOwnQueue(queue);
			// What the starter does for its own work queues: retries come back through
			// the return exchange.
			this.broker.bind(queue, RetryTopology.RETURN_EXCHANGE, queue);
			consumer = new MinimalRetryingConsumer(this.settings.broker(), queue, this.settings.prefetch(),
					this.settings.concurrency(), this.settings.policyDelays(listener, type),
					this.limitWorkloads.forQueue(queue));
			this.limitConsumers.put(queue, consumer);
		}
		return new LimitSide(label, consumer);
	}

	/**
	 * Measure sides side by side, with this run's repeats and warm-ups.
	 * @param benchmark the benchmark's key, for the log and the round ids
	 * @param sides each side's measurement, in the order of the report
	 * @return what the repeats measured
	 */
	Alternation.Outcome alternate(String benchmark, Map<String, Alternation.Measurement> sides) {
		return Alternation.run(benchmark, this.runId + "-" + benchmark, List.copyOf(sides.keySet()),
				this.settings.repeats(), this.settings.warmups(),
				(label, roundId) -> sides.get(label).measure(label, roundId), this.log);
	}

	/**
	 * Measure sides side by side when a round yields more than one figure, with repeats
	 * and warm-ups of the benchmark's own.
	 * @param <T> what a round yields
	 * @param benchmark the benchmark's key, for the log and the round ids
	 * @param sides each side's measurement, in the order of the report
	 * @param repeats measured repeats
	 * @param warmups discarded repeats before them
	 * @param describe what the log shows of a round's figures
	 * @return what the repeats yielded
	 */
	<T> Alternation.Rounds<T> alternate(String benchmark, Map<String, Alternation.RoundMeasurement<T>> sides,
			int repeats, int warmups, Function<T, String> describe) {
		return Alternation.rounds(benchmark, this.runId + "-" + benchmark, List.copyOf(sides.keySet()), repeats,
				warmups, (label, roundId) -> sides.get(label).measure(label, roundId), describe, this.log);
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
			case PLAIN -> {
				properties.put("benchmarks.listeners", "plain");
				usedListeners.add(BenchmarkListeners.HAPPY);
				usedListeners.add(BenchmarkListeners.BATCH);
			}
			case BLOCKING -> {
				properties.put("benchmarks.listeners", "plain");
				properties.put("spring.rabbitmq.listener.simple.retry.enabled", "true");
				properties.put("spring.rabbitmq.listener.simple.retry.max-retries",
						String.valueOf(BenchmarkSettings.STORM_FAILING_ATTEMPTS));
				List<Duration> delays = this.settings.stormDelays();
				properties.put("spring.rabbitmq.listener.simple.retry.initial-interval",
						delays.get(0).toMillis() + "ms");
				properties.put("spring.rabbitmq.listener.simple.retry.multiplier",
						String.valueOf((double) delays.get(1).toMillis() / delays.get(0).toMillis()));
				properties.put("spring.rabbitmq.listener.simple.retry.max-interval", delays.get(1).toMillis() + "ms");
				usedListeners.add(BenchmarkListeners.STORM);
			}
			case RECOVERER -> {
				// It republishes into the default type's forwarding tier, which that
				// application declares.
				application(tiered(BenchmarkSettings.DEFAULT_TIER_TYPE));
				properties.put("benchmarks.listeners", "plain");
				properties.put("spring.rabbitmq.listener.simple.retry.enabled", "true");
				properties.put("spring.rabbitmq.listener.simple.retry.max-retries", "0");
				properties.put("benchmarks.recoverer.enabled", "true");
				properties.put("benchmarks.recoverer.routing-key", queue(RECOVERER, BenchmarkListeners.FORWARDING));
				properties.put("benchmarks.recoverer.tier",
						TierLadder.nameOf(BenchmarkSettings.forwardingTier(BenchmarkSettings.DEFAULT_TIER_TYPE)));
				usedListeners.add(BenchmarkListeners.FORWARDING);
			}
			case OBSERVED, TRACED -> {
				putRetryableProperties(properties, name, BenchmarkSettings.DEFAULT_TIER_TYPE);
				properties.put("spring.rabbitmq.listener.simple.observation-enabled", "true");
				properties.put("spring.rabbitmq.template.observation-enabled", "true");
				if (TRACED.equals(name)) {
					properties.remove("spring.autoconfigure.exclude");
					// Every message traced: the most a tracer can cost (Spring Boot's
					// default keeps 10%).
					properties.put("management.tracing.sampling.probability", "1.0");
				}
				usedListeners.addAll(LISTENERS);
			}
			case OUTAGE -> {
				putOutageProperties(properties);
				usedListeners.add(BenchmarkListeners.OUTAGE);
				usedListeners.add(BenchmarkListeners.OUTAGE_BREAKER);
			}
			case JITTER -> {
				putJitterProperties(properties);
				usedListeners.add(BenchmarkListeners.JITTER);
				usedListeners.add(BenchmarkListeners.JITTER_OFF);
			}
			case BROKER_BACKEND -> {
				// Its work queues are quorum queues that the application declares: the
				// starter must see their arguments to hold retries in them.
				putBrokerBackendProperties(properties);
				BROKER_BACKEND_LISTENERS
					.forEach((listener) -> this.broker.ownQueueDeclaredElsewhere(queue(name, listener)));
			}
			case AMQP_LISTENER -> {
				putAmqpListenerProperties(properties);
				usedListeners.add(BenchmarkListeners.AMQP_PLAIN);
				usedListeners.add(BenchmarkListeners.AMQP_RETRYABLE);
			}
			case DELAYED_SEND -> putDelayedSendProperties(properties);
			default -> {
				putRetryableProperties(properties, name, tierTypeOf(name));
				usedListeners.addAll(LISTENERS);
			}
		}
		// Work queues exist before the application starts, so that the starter's return
		// bindings find them.
		usedListeners.forEach((listener) -> this.broker.declareOwnQueue(queue(name, listener)));
		this.log.accept("Starting application '" + name + "'");
		return RunningApplication.start(name, BenchmarkApplication.class, properties);
	}

	private static QueueType tierTypeOf(String application) {
		for (QueueType type : QueueType.values()) {
			if (tiered(type).equals(application)) {
				return type;
			}
		}
		throw new IllegalArgumentException("Unknown application " + application);
	}

	// The application with {@code @RetryableListener}s: its tier type set explicitly (no
	// figure depends on the starter's default), tiers of that type of its own, and a
	// policy per listener.
	private void putRetryableProperties(Map<String, String> properties, String application, QueueType type) {
		properties.put("benchmarks.listeners", "retryable");
		properties.put("retry.enabled", "true");
		properties.put("retry.queue-type", BenchmarkSettings.typeName(type));
		TreeSet<Duration> tiers = new TreeSet<>();
		for (String listener : POLICIES) {
			List<Duration> delays = this.settings.policyDelays(listener, type);
			tiers.addAll(delays);
			properties.put("retry.policies." + listener + ".max-retries", String.valueOf(delays.size()));
			properties.put("retry.policies." + listener + ".delays", names(delays));
		}
		properties.put("retry.tiers", names(tiers));
		String parkingLot = parkingLot(application);
		properties.put("retry.parking-lot", parkingLot);
		noteRetryTopology(tiers, parkingLot);
		putScheduledQueue(properties, application);
	}

	// The outage benchmark's application: one policy for both listeners, its breaker's
	// settings (the listener with {@code breaker = Breaker.ON} uses them), quorum tiers,
	// and a parking lot that only they use.
	private void putOutageProperties(Map<String, String> properties) {
		QueueType type = BenchmarkSettings.DEFAULT_TIER_TYPE;
		String policy = "retry.policies." + BenchmarkListeners.OUTAGE + ".";
		properties.put("benchmarks.listeners", "outage");
		properties.put("retry.enabled", "true");
		properties.put("retry.queue-type", BenchmarkSettings.typeName(type));
		List<Duration> delays = this.settings.policyDelays(BenchmarkListeners.OUTAGE, type);
		properties.put(policy + "max-retries", String.valueOf(delays.size()));
		properties.put(policy + "delays", names(delays));
		properties.put(policy + "breaker.failure-rate-threshold",
				String.valueOf(BenchmarkSettings.OUTAGE_BREAKER_THRESHOLD));
		properties.put(policy + "breaker.sliding-window-size", String.valueOf(BenchmarkSettings.OUTAGE_BREAKER_WINDOW));
		properties.put(policy + "breaker.minimum-calls", String.valueOf(BenchmarkSettings.OUTAGE_BREAKER_WINDOW));
		properties.put(policy + "breaker.wait-in-open-state", this.settings.outageBreakerWait().toMillis() + "ms");
		properties.put(policy + "breaker.probes-in-half-open-state",
				String.valueOf(BenchmarkSettings.OUTAGE_BREAKER_PROBES));
		TreeSet<Duration> tiers = new TreeSet<>(delays);
		properties.put("retry.tiers", names(tiers));
		String parkingLot = parkingLot(OUTAGE);
		properties.put("retry.parking-lot", parkingLot);
		noteRetryTopology(tiers, parkingLot);
		putScheduledQueue(properties, OUTAGE);
		// Every parked message is logged at WARN with its stack trace: console output,
		// not parking.
		properties.put("logging.level.io.github.tieredretry.listener.RetryingMessageListener", "ERROR");
		properties.put("benchmarks.queue." + BenchmarkListeners.OUTAGE, queue(OUTAGE, BenchmarkListeners.OUTAGE));
		properties.put("benchmarks.queue." + BenchmarkListeners.OUTAGE_BREAKER,
				queue(OUTAGE, BenchmarkListeners.OUTAGE_BREAKER));
	}

	// The jitter benchmark's application: one policy for both listeners (one retry after
	// the delay, with the jitter; the other listener's annotation turns it off), tiers
	// fine enough to serve the spread, and a parking lot that only they use.
	private void putJitterProperties(Map<String, String> properties) {
		QueueType type = BenchmarkSettings.DEFAULT_TIER_TYPE;
		String policy = "retry.policies." + BenchmarkListeners.JITTER + ".";
		properties.put("benchmarks.listeners", "jitter");
		properties.put("retry.enabled", "true");
		properties.put("retry.queue-type", BenchmarkSettings.typeName(type));
		List<Duration> delays = this.settings.policyDelays(BenchmarkListeners.JITTER, type);
		properties.put(policy + "max-retries", String.valueOf(delays.size()));
		properties.put(policy + "delays", names(delays));
		properties.put(policy + "jitter", String.valueOf(this.settings.jitterFactor()));
		TreeSet<Duration> tiers = new TreeSet<>(BenchmarkSettings.tiers(this.settings.jitterTiers(), type));
		properties.put("retry.tiers", names(tiers));
		String parkingLot = parkingLot(JITTER);
		properties.put("retry.parking-lot", parkingLot);
		noteRetryTopology(tiers, parkingLot);
		putScheduledQueue(properties, JITTER);
		properties.put("benchmarks.queue." + BenchmarkListeners.JITTER, queue(JITTER, BenchmarkListeners.JITTER));
		properties.put("benchmarks.queue." + BenchmarkListeners.JITTER_OFF,
				queue(JITTER, BenchmarkListeners.JITTER_OFF));
	}

	// The broker-backend benchmark's application: each listener on the tiers with the
	// policy of benchmarks 2-4 (quorum tiers), and on the broker backend with a policy of
	// the nominal delays, which the queue's delayed retry makes; the starter adds the
	// delayed-retry arguments to the broker side's quorum work queues. The listener on
	// the AMQP 1.0 client has the accuracy delay with jitter, which no queue argument
	// makes: a delivery time per message does.
	private void putBrokerBackendProperties(Map<String, String> properties) {
		QueueType type = BenchmarkSettings.DEFAULT_TIER_TYPE;
		properties.put("benchmarks.listeners", "broker-backend");
		properties.put("benchmarks.amqp-client", "true");
		properties.put("retry.enabled", "true");
		properties.put("retry.queue-type", BenchmarkSettings.typeName(type));
		properties.put("retry.broker.declare-queue-arguments", "true");
		TreeSet<Duration> tiers = new TreeSet<>();
		for (String listener : POLICIES) {
			List<Duration> delays = this.settings.policyDelays(listener, type);
			tiers.addAll(delays);
			properties.put("retry.policies." + listener + ".max-retries", String.valueOf(delays.size()));
			properties.put("retry.policies." + listener + ".delays", names(delays));
		}
		for (String listener : List.of(BenchmarkListeners.BACKEND_STORM_BROKER,
				BenchmarkListeners.BACKEND_FORWARDING_BROKER, BenchmarkListeners.BACKEND_ACCURACY_BROKER)) {
			List<Duration> delays = this.settings.brokerPolicyDelays(listener);
			properties.put("retry.policies." + listener + ".max-retries", String.valueOf(delays.size()));
			properties.put("retry.policies." + listener + ".delays", names(delays));
		}
		String amqp = "retry.policies." + BenchmarkListeners.BACKEND_ACCURACY_AMQP + ".";
		List<Duration> amqpDelays = this.settings.brokerPolicyDelays(BenchmarkListeners.BACKEND_ACCURACY_AMQP);
		properties.put(amqp + "max-retries", String.valueOf(amqpDelays.size()));
		properties.put(amqp + "delays", names(amqpDelays));
		properties.put(amqp + "jitter", String.valueOf(BenchmarkSettings.AMQP_ACCURACY_JITTER));
		properties.put("retry.tiers", names(tiers));
		String parkingLot = parkingLot(BROKER_BACKEND);
		properties.put("retry.parking-lot", parkingLot);
		noteRetryTopology(tiers, parkingLot);
		putScheduledQueue(properties, BROKER_BACKEND);
		List<String> queues = new ArrayList<>();
		for (String listener : BROKER_BACKEND_LISTENERS) {
			queues.add(queue(BROKER_BACKEND, listener));
			properties.put("benchmarks.queue." + listener, queue(BROKER_BACKEND, listener));
		}
		properties.put("benchmarks.broker-backend.queues", String.join(",", queues));
	}

	// The AMQP 1.0 listener benchmark's application: its listeners on the RabbitMQ AMQP
	// 1.0 client, the retryable one with the failure storm's policy and quorum tiers of
	// its own.
	private void putAmqpListenerProperties(Map<String, String> properties) {
		QueueType type = BenchmarkSettings.DEFAULT_TIER_TYPE;
		properties.put("benchmarks.listeners", "amqp-listener");
		properties.put("benchmarks.amqp-client", "true");
		properties.put("retry.enabled", "true");
		properties.put("retry.queue-type", BenchmarkSettings.typeName(type));
		List<Duration> delays = this.settings.policyDelays(BenchmarkListeners.STORM, type);
		properties.put("retry.policies." + BenchmarkListeners.STORM + ".max-retries", String.valueOf(delays.size()));
		properties.put("retry.policies." + BenchmarkListeners.STORM + ".delays", names(delays));
		TreeSet<Duration> tiers = new TreeSet<>(delays);
		properties.put("retry.tiers", names(tiers));
		String parkingLot = parkingLot(AMQP_LISTENER);
		properties.put("retry.parking-lot", parkingLot);
		noteRetryTopology(tiers, parkingLot);
		putScheduledQueue(properties, AMQP_LISTENER);
		for (String listener : List.of(BenchmarkListeners.AMQP_PLAIN, BenchmarkListeners.AMQP_RETRYABLE)) {
			properties.put("benchmarks.queue." + listener, queue(AMQP_LISTENER, listener));
		}
	}

	// The delayed-send benchmark's application: its DelayedSender with tiers of its own
	// (the smallest two compose the precision's delays; the throughput sides publish into
	// the forwarding tier), a scheduled queue of this run, no listener; its
	// RabbitTemplate (the plain sides) with correlated confirms and returns, mandatory.
	private void putDelayedSendProperties(Map<String, String> properties) {
		QueueType type = BenchmarkSettings.DEFAULT_TIER_TYPE;
		properties.put("retry.enabled", "true");
		properties.put("retry.queue-type", BenchmarkSettings.typeName(type));
		TreeSet<Duration> tiers = new TreeSet<>(this.settings.delayedSendTiers());
		properties.put("retry.tiers", names(tiers));
		String parkingLot = parkingLot(DELAYED_SEND);
		properties.put("retry.parking-lot", parkingLot);
		noteRetryTopology(tiers, parkingLot);
		putScheduledQueue(properties, DELAYED_SEND);
		properties.put("spring.rabbitmq.publisher-confirm-type", "correlated");
		properties.put("spring.rabbitmq.publisher-returns", "true");
		properties.put("spring.rabbitmq.template.mandatory", "true");
	}

	/**
	 * The scheduled queue of an application with tiers (where the tiers return its
	 * delayed sends; the starter declares one per application unless
	 * {@code retry.delayed-send.enabled=false}): a queue of this run, deleted at its end.
	 * @param properties the application's properties
	 * @param application the application
	 */
	void putScheduledQueue(Map<String, String> properties, String application) {
		String queue = scheduledQueue(application);
		properties.put("retry.delayed-send.queue", queue);
		this.broker.ownQueueDeclaredElsewhere(queue);
	}

	/**
	 * The scheduled queue of an application with tiers: a queue of this run.
	 * @param application the application
	 * @return the scheduled queue's name
	 */
	String scheduledQueue(String application) {
		return queue(application, "scheduled");
	}

	/**
	 * The parking lot of an application with {@code @RetryableListener}s: a queue of this
	 * run.
	 * @param application the application
	 * @return the parking lot's name
	 */
	String parkingLot(String application) {
		return queue(application, "parking-lot");
	}

	/**
	 * Note the retry topology an application is about to declare, so that the end of the
	 * run removes what the run created: the parking lot (its own), the tiers, the shared
	 * parking lot and the retry exchanges if they did not exist.
	 * @param tiers the application's tiers
	 * @param parkingLot its parking lot, a name unique to this run
	 */
	void noteRetryTopology(Collection<Duration> tiers, String parkingLot) {
		List<String> sharedQueues = new ArrayList<>(tiers.stream().map(RetryTopology::tierQueueName).toList());
		sharedQueues.add(RetryTopology.SHARED_PARKING_LOT);
		// In the order they can be deleted: retry.parked before retry.unroutable, which
		// is
		// bound to it (an exchange that is the source of a binding is in use).
		this.broker.noteSharedObjects(sharedQueues, List.of(RetryTopology.DELAY_EXCHANGE, RetryTopology.RETURN_EXCHANGE,
				RetryTopology.PARKED_EXCHANGE, RetryTopology.UNROUTABLE_EXCHANGE, RetryTopology.UNCLAIMED_EXCHANGE));
		this.broker.ownQueueDeclaredElsewhere(parkingLot);
	}

	/**
	 * Tier names for a property, e.g. {@code 1001ms,2001ms}.
	 * @param tiers the tiers
	 * @return their names, comma-separated
	 */
	static String names(Collection<Duration> tiers) {
		return tiers.stream().map(TierLadder::nameOf).collect(Collectors.joining(","));
	}

	/**
	 * Properties every application gets: the broker, the listener queues, and the same
	 * container settings.
	 * @param application the application's name
	 * @return the properties
	 */
	Map<String, String> commonProperties(String application) {
		Map<String, String> properties = new LinkedHashMap<>(this.settings.broker().springProperties());
		properties.put("spring.application.name", "benchmarks-" + application);
		properties.put("logging.level.root", "WARN");
		// RepublishMessageRecoverer logs every republish at WARN (under the class of the
		// instance): that is console output, not forwarding, so the recoverer is measured
		// without it.
		properties.put("logging.level.org.springframework.amqp.rabbit.retry", "ERROR");
		properties.put("logging.level.io.github.tieredretry.benchmarks.app", "ERROR");
		properties.put("retry.enabled", "false");
		properties.put("spring.autoconfigure.exclude", TRACING_AUTO_CONFIGURATIONS);
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
	 * Remove this run's messages from the forwarding tiers, which nobody else shares:
	 * left there, they would come back after the tier's TTL to work queues that no longer
	 * exist.
	 */
	void purgeForwardingTiers() {
		purgeForwardingTiers(this.broker);
	}

	static void purgeForwardingTiers(BrokerOperations broker) {
		for (QueueType type : QueueType.values()) {
			String tier = RetryTopology.tierQueueName(BenchmarkSettings.forwardingTier(type));
			if (broker.queueExists(tier)) {
				broker.purge(tier);
			}
		}
	}

	@Override
	public void close() {
		List<AutoCloseable> closeables = new ArrayList<>(this.limitConsumers.values());
		closeables.addAll(this.applications.values());
		this.limitConsumers.clear();
		this.applications.clear();
		RuntimeException failure = null;
		for (AutoCloseable closeable : closeables) {
			try {
				closeable.close();
			}
			catch (Exception ex) {
				if (failure == null) {
					failure = (ex instanceof RuntimeException runtime) ? runtime : new IllegalStateException(ex);
				}
			}
		}
		if (failure != null) {
			throw failure;
		}
	}

}
