package io.github.tieredretry.benchmarks.app;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.tieredretry.annotation.Backend;
import io.github.tieredretry.annotation.Breaker;
import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.listener.BatchListenerFailedException;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.RabbitListener;

/**
 * The listeners under measurement: the same methods, plain or with
 * {@code @RetryableListener}. Each consumes a queue named by a property, and starts only
 * when the harness starts it.
 */
public final class BenchmarkListeners {

	/**
	 * Listener id and property suffix ({@code benchmarks.queue.<name>}) of the happy-path
	 * listener.
	 */
	public static final String HAPPY = "happy";

	/** Listener id of the failure-storm listener. */
	public static final String STORM = "storm";

	/**
	 * Listener id of the batch listener (consumer-side batches of the factory
	 * {@code batchFactory}).
	 */
	public static final String BATCH = "batch";

	/** Listener id of the forwarding-rate listener. */
	public static final String FORWARDING = "forwarding";

	/** Listener id of the delay-accuracy listener. */
	public static final String ACCURACY = "accuracy";

	/**
	 * Listener id of the outage benchmark's listener without a circuit breaker, and the
	 * name of the policy both of its listeners use.
	 */
	public static final String OUTAGE = "outage";

	/** Listener id of the outage benchmark's listener with a circuit breaker. */
	public static final String OUTAGE_BREAKER = "outage-breaker";

	/**
	 * Listener id of the jitter benchmark's listener with its policy's jitter, and the
	 * name of the policy both of its listeners use.
	 */
	public static final String JITTER = "jitter";

	/**
	 * Listener id of the jitter benchmark's listener whose annotation turns the jitter
	 * off.
	 */
	public static final String JITTER_OFF = "jitter-off";

	/**
	 * Listener id of the broker-backend benchmark's storm listener whose retries wait in
	 * the tiers ({@code backend = TIERS}), on a quorum work queue; its policy is
	 * {@link #STORM}'s.
	 */
	public static final String BACKEND_STORM_TIERS = "backend-storm-tiers";

	/**
	 * Listener id of the same storm listener whose retries the queue holds
	 * ({@code backend = BROKER}), and the name of its policy.
	 */
	public static final String BACKEND_STORM_BROKER = "backend-storm-broker";

	/**
	 * Listener id of the broker-backend benchmark's forwarding listener on the tiers; its
	 * policy is {@link #FORWARDING}'s.
	 */
	public static final String BACKEND_FORWARDING_TIERS = "backend-forwarding-tiers";

	/**
	 * Listener id of the same forwarding listener on the broker backend, and the name of
	 * its policy.
	 */
	public static final String BACKEND_FORWARDING_BROKER = "backend-forwarding-broker";

	/**
	 * Listener id of the broker-backend benchmark's delay-accuracy listener on the tiers;
	 * its policy is {@link #ACCURACY}'s.
	 */
	public static final String BACKEND_ACCURACY_TIERS = "backend-accuracy-tiers";

	/**
	 * Listener id of the same delay-accuracy listener on the broker backend, and the name
	 * of its policy.
	 */
	public static final String BACKEND_ACCURACY_BROKER = "backend-accuracy-broker";

	/**
	 * Listener id of the same delay-accuracy listener on the RabbitMQ AMQP 1.0 client
	 * ({@link #AMQP_CONTAINER_FACTORY}), whose retries its quorum queue holds until the
	 * delivery time the starter gives each one, and the name of its policy.
	 */
	public static final String BACKEND_ACCURACY_AMQP = "backend-accuracy-amqp";

	/**
	 * Listener id of the AMQP 1.0 listener benchmark's plain listener on the RabbitMQ
	 * AMQP 1.0 client.
	 */
	public static final String AMQP_PLAIN = "amqp-plain";

	/**
	 * Listener id of the same listener with {@code @RetryableListener}, its retries in
	 * the tiers; its policy is {@link #STORM}'s.
	 */
	public static final String AMQP_RETRYABLE = "amqp-retryable";

	/**
	 * The bean name of the container factory of the RabbitMQ AMQP 1.0 client, in the
	 * applications that have one.
	 */
	public static final String AMQP_CONTAINER_FACTORY = "amqpContainerFactory";

	private BenchmarkListeners() {
	}

	private static void handle(Workloads workloads, Message message) {
		workloads.forQueue(message.getMessageProperties().getConsumerQueue()).handle(message);
	}

	// Every message of the batch is attempted; those that failed are named, each with its
	// failure, so that each is retried on its own.
	private static void handleBatch(Workloads workloads, List<Message> messages) {
		Map<Integer, Throwable> failures = null;
		for (int i = 0; i < messages.size(); i++) {
			try {
				handle(workloads, messages.get(i));
			}
			catch (Workload.SimulatedFailure ex) {
				failures = (failures != null) ? failures : new LinkedHashMap<>();
				failures.put(i, ex);
			}
		}
		if (failures != null) {
			throw new BatchListenerFailedException(failures.size() + " of " + messages.size() + " failed", failures);
		}
	}

	/**
	 * Plain {@code @RabbitListener}s: no tiered retries (Spring AMQP's own retry, if the
	 * factory has it).
	 */
	static final class Plain {

		private final Workloads workloads;

		Plain(Workloads workloads) {
			this.workloads = workloads;
		}

		@RabbitListener(id = HAPPY, queues = "${benchmarks.queue.happy}", autoStartup = "false")
		void happy(Message message) {
			handle(this.workloads, message);
		}

		@RabbitListener(id = STORM, queues = "${benchmarks.queue.storm}", autoStartup = "false")
		void storm(Message message) {
			handle(this.workloads, message);
		}

		@RabbitListener(id = FORWARDING, queues = "${benchmarks.queue.forwarding}", autoStartup = "false")
		void forwarding(Message message) {
			handle(this.workloads, message);
		}

		@RabbitListener(id = BATCH, queues = "${benchmarks.queue.batch}", autoStartup = "false",
				containerFactory = "batchFactory")
		void batch(List<Message> messages) {
			messages.forEach((message) -> handle(this.workloads, message));
		}

	}

	/** The same listeners with tiered retries; each has a policy set by the harness. */
	static final class Retryable {

		private final Workloads workloads;

		Retryable(Workloads workloads) {
			this.workloads = workloads;
		}

		@RabbitListener(id = HAPPY, queues = "${benchmarks.queue.happy}", autoStartup = "false")
		@RetryableListener(policy = STORM)
		void happy(Message message) {
			handle(this.workloads, message);
		}

		@RabbitListener(id = STORM, queues = "${benchmarks.queue.storm}", autoStartup = "false")
		@RetryableListener(policy = STORM)
		void storm(Message message) {
			handle(this.workloads, message);
		}

		@RabbitListener(id = FORWARDING, queues = "${benchmarks.queue.forwarding}", autoStartup = "false")
		@RetryableListener(policy = FORWARDING)
		void forwarding(Message message) {
			handle(this.workloads, message);
		}

		@RabbitListener(id = ACCURACY, queues = "${benchmarks.queue.accuracy}", autoStartup = "false")
		@RetryableListener(policy = ACCURACY)
		void accuracy(Message message) {
			handle(this.workloads, message);
		}

		@RabbitListener(id = BATCH, queues = "${benchmarks.queue.batch}", autoStartup = "false",
				containerFactory = "batchFactory")
		@RetryableListener(policy = STORM)
		void batch(List<Message> messages) {
			handleBatch(this.workloads, messages);
		}

	}

	/**
	 * The outage benchmark's listeners: the same policy, one with the policy's circuit
	 * breaker, one without.
	 */
	static final class Outage {

		private final Workloads workloads;

		Outage(Workloads workloads) {
			this.workloads = workloads;
		}

		@RabbitListener(id = OUTAGE, queues = "${benchmarks.queue.outage}", autoStartup = "false")
		@RetryableListener(policy = OUTAGE, breaker = Breaker.OFF)
		void withoutBreaker(Message message) {
			handle(this.workloads, message);
		}

		@RabbitListener(id = OUTAGE_BREAKER, queues = "${benchmarks.queue.outage-breaker}", autoStartup = "false")
		@RetryableListener(policy = OUTAGE, breaker = Breaker.ON)
		void withBreaker(Message message) {
			handle(this.workloads, message);
		}

	}

	/**
	 * The broker-backend benchmark's listeners: each listener twice, on quorum work
	 * queues of their own, with its retries in the tiers and held by the queue (RabbitMQ
	 * 4.3's delayed retry); the backend is set on the annotation, so that a side that
	 * cannot run where it should fails startup instead of measuring the other backend.
	 */
	static final class BrokerBackend {

		private final Workloads workloads;

		BrokerBackend(Workloads workloads) {
			this.workloads = workloads;
		}

		@RabbitListener(id = BACKEND_STORM_TIERS, queues = "${benchmarks.queue.backend-storm-tiers}",
				autoStartup = "false")
		@RetryableListener(policy = STORM, backend = Backend.TIERS)
		void stormOnTiers(Message message) {
			handle(this.workloads, message);
		}

		@RabbitListener(id = BACKEND_STORM_BROKER, queues = "${benchmarks.queue.backend-storm-broker}",
				autoStartup = "false")
		@RetryableListener(policy = BACKEND_STORM_BROKER, backend = Backend.BROKER)
		void stormOnBroker(Message message) {
			handle(this.workloads, message);
		}

		@RabbitListener(id = BACKEND_FORWARDING_TIERS, queues = "${benchmarks.queue.backend-forwarding-tiers}",
				autoStartup = "false")
		@RetryableListener(policy = FORWARDING, backend = Backend.TIERS)
		void forwardingOnTiers(Message message) {
			handle(this.workloads, message);
		}

		@RabbitListener(id = BACKEND_FORWARDING_BROKER, queues = "${benchmarks.queue.backend-forwarding-broker}",
				autoStartup = "false")
		@RetryableListener(policy = BACKEND_FORWARDING_BROKER, backend = Backend.BROKER)
		void forwardingOnBroker(Message message) {
			handle(this.workloads, message);
		}

		@RabbitListener(id = BACKEND_ACCURACY_TIERS, queues = "${benchmarks.queue.backend-accuracy-tiers}",
				autoStartup = "false")
		@RetryableListener(policy = ACCURACY, backend = Backend.TIERS)
		void accuracyOnTiers(Message message) {
			handle(this.workloads, message);
		}

		@RabbitListener(id = BACKEND_ACCURACY_BROKER, queues = "${benchmarks.queue.backend-accuracy-broker}",
				autoStartup = "false")
		@RetryableListener(policy = BACKEND_ACCURACY_BROKER, backend = Backend.BROKER)
		void accuracyOnBroker(Message message) {
			handle(this.workloads, message);
		}

	}

	/**
	 * The broker-backend benchmark's delay-accuracy listener on the RabbitMQ AMQP 1.0
	 * client, on a quorum work queue of its own. Its container hands over no consumer
	 * queue, so the listener knows its queue by name. It asks for {@code backend =
	 * BROKER}: where the queue cannot hold its retries, startup fails instead of
	 * measuring the tiers.
	 */
	static final class AmqpClient {

		private final Workloads workloads;

		private final String queue;

		AmqpClient(Workloads workloads, String queue) {
			this.workloads = workloads;
			this.queue = queue;
		}

		@RabbitListener(id = BACKEND_ACCURACY_AMQP, queues = "${benchmarks.queue.backend-accuracy-amqp}",
				containerFactory = AMQP_CONTAINER_FACTORY, autoStartup = "false")
		@RetryableListener(policy = BACKEND_ACCURACY_AMQP, backend = Backend.BROKER)
		void accuracyOnAmqpClient(Message message) {
			this.workloads.forQueue(this.queue).handle(message);
		}

	}

	/**
	 * The AMQP 1.0 listener benchmark's listeners on the RabbitMQ AMQP 1.0 client
	 * ({@link #AMQP_CONTAINER_FACTORY}), each on a classic work queue of its own: the
	 * same method plain and with {@code @RetryableListener}, whose retries go through the
	 * tiers ({@code backend = TIERS}: a quorum work queue on RabbitMQ 4.3 could hold them
	 * instead). Their container hands over no consumer queue, so each knows its queue by
	 * name.
	 */
	static final class AmqpListeners {

		private final Workloads workloads;

		private final String plainQueue;

		private final String retryableQueue;

		AmqpListeners(Workloads workloads, String plainQueue, String retryableQueue) {
			this.workloads = workloads;
			this.plainQueue = plainQueue;
			this.retryableQueue = retryableQueue;
		}

		@RabbitListener(id = AMQP_PLAIN, queues = "${benchmarks.queue.amqp-plain}",
				containerFactory = AMQP_CONTAINER_FACTORY, autoStartup = "false")
		void plain(Message message) {
			this.workloads.forQueue(this.plainQueue).handle(message);
		}

		@RabbitListener(id = AMQP_RETRYABLE, queues = "${benchmarks.queue.amqp-retryable}",
				containerFactory = AMQP_CONTAINER_FACTORY, autoStartup = "false")
		@RetryableListener(policy = STORM, backend = Backend.TIERS)
		void retryable(Message message) {
			this.workloads.forQueue(this.retryableQueue).handle(message);
		}

	}

	/**
	 * The jitter benchmark's listeners: the same policy, one with its jitter, one with
	 * the annotation's {@code jitter = 0}.
	 */
	static final class Jitter {

		private final Workloads workloads;

		Jitter(Workloads workloads) {
			this.workloads = workloads;
		}

		@RabbitListener(id = JITTER, queues = "${benchmarks.queue.jitter}", autoStartup = "false")
		@RetryableListener(policy = JITTER)
		void withJitter(Message message) {
			handle(this.workloads, message);
		}

		@RabbitListener(id = JITTER_OFF, queues = "${benchmarks.queue.jitter-off}", autoStartup = "false")
		@RetryableListener(policy = JITTER, jitter = 0)
		void withoutJitter(Message message) {
			handle(this.workloads, message);
		}

	}

}
