package io.github.tieredretry.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import io.github.tieredretry.annotation.Backend;
import io.github.tieredretry.benchmarks.app.TopologyApplication;
import io.github.tieredretry.benchmarks.report.ObjectCounts;
import io.github.tieredretry.benchmarks.report.TopologyResult;
import io.github.tieredretry.internal.install.RetryBackends;
import io.github.tieredretry.internal.policy.TierLadder;

import org.springframework.amqp.core.Binding;
import org.springframework.amqp.core.Declarable;
import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.Exchange;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Benchmark 5: the broker objects that retries need for many listeners. An application
 * with that many {@code @RetryableListener}s is started, then one whose listeners each
 * get their own delay queues and dead-letter queue; what each application's
 * {@code RabbitAdmin} declares is counted, and every counted queue and exchange is looked
 * up on the broker.
 */
final class TopologyBenchmark {

	private TopologyBenchmark() {
	}

	static TopologyResult run(RunContext run) {
		int listeners = run.settings().topologyListeners();
		List<String> queues = IntStream.range(0, listeners)
			.mapToObj((index) -> run.runId() + "-topology-" + index)
			.toList();
		queues.forEach(run.broker()::declareOwnQueue);
		List<Duration> tierDurations = BenchmarkSettings.tiers(BenchmarkSettings.TOPOLOGY_TIERS,
				BenchmarkSettings.DEFAULT_TIER_TYPE);
		List<String> tiers = tierDurations.stream().map(TierLadder::nameOf).toList();
		Verified tiered = start(run, "tiered", "tiered", queues, tierDurations, Map.of());
		Verified perQueue = start(run, "per-queue", "per-queue", queues, tierDurations, Map.of());
		run.log("[topology] " + listeners + " listeners × " + tiers.size() + " tiers: tiered " + tiered.counts()
				+ ", one set per queue " + perQueue.counts());
		return new TopologyResult(listeners, tiers, tiered.counts(), perQueue.counts(),
				tiered.verified() && perQueue.verified());
	}

	/**
	 * Start an application with many listeners and count what it declares for their
	 * retries; its work queues, if it declares them, are not counted.
	 * @param run the run
	 * @param name the application's name, after {@code topology-}
	 * @param kind {@code tiered} ({@code @RetryableListener}) or {@code per-queue}
	 * @param queues the listeners' work queues
	 * @param tiers the tiers
	 * @param extraProperties more properties (for {@code tiered}: the backend, quorum
	 * work queues the application declares with
	 * {@code benchmarks.topology.work-queues=quorum})
	 * @return what it declared, and whether the broker has it
	 */
	static Verified start(RunContext run, String name, String kind, List<String> queues, List<Duration> tiers,
			Map<String, String> extraProperties) {
		Map<String, String> properties = run.commonProperties("topology-" + name);
		properties.putAll(extraProperties);
		properties.put("benchmarks.topology.kind", kind);
		properties.put("benchmarks.topology.queues", String.join(",", queues));
		properties.put("benchmarks.topology.tiers", RunContext.names(tiers));
		if ("tiered".equals(kind)) {
			String parkingLot = run.runId() + "-topology-parking-lot";
			properties.put("retry.enabled", "true");
			// Explicit, like every side: the counts must not depend on the starter's
			// default.
			properties.put("retry.queue-type", BenchmarkSettings.typeName(BenchmarkSettings.DEFAULT_TIER_TYPE));
			properties.put("retry.tiers", RunContext.names(tiers));
			properties.put("retry.parking-lot", parkingLot);
			run.noteRetryTopology(tiers, parkingLot);
			run.putScheduledQueue(properties, "topology-" + name);
		}
		else {
			TopologyApplication.perQueueDeclarables(queues, tiers)
				.forEach((declarable) -> run.broker().ownQueueDeclaredElsewhere(((Queue) declarable).getName()));
		}
		run.log("Starting application 'topology-" + name + "' with " + queues.size() + " listeners");
		try (RunningApplication application = RunningApplication.start("topology-" + name, TopologyApplication.class,
				properties)) {
			ConfigurableApplicationContext context = application.context();
			// Nothing consumes, so make the admin declare now rather than on a first
			// connection.
			context.getBean(RabbitAdmin.class).initialize();
			return verify(run, declaredBy(context), queues, listenersOnTheBroker(context));
		}
	}

	// How many listeners the broker holds retries for (RabbitMQ 4.3's delayed retry).
	private static int listenersOnTheBroker(ConfigurableApplicationContext context) {
		RetryBackends backends = context.getBeanProvider(RetryBackends.class).getIfAvailable();
		if (backends == null) {
			return 0;
		}
		return (int) backends.backends()
			.stream()
			.filter((backend) -> backend.choice() != null && backend.choice().backend() == Backend.BROKER)
			.count();
	}

	// What an application's {@code RabbitAdmin} declares: its {@link Declarable} beans
	// and the content of its {@link Declarables} beans (the starter's retry topology is
	// one).
	private static List<Declarable> declaredBy(ConfigurableApplicationContext context) {
		List<Declarable> declarables = new ArrayList<>(context.getBeansOfType(Declarable.class).values());
		context.getBeansOfType(Declarables.class).values().forEach((bean) -> declarables.addAll(bean.getDeclarables()));
		return declarables;
	}

	private static Verified verify(RunContext run, List<Declarable> declarables, List<String> workQueues,
			int listenersOnTheBroker) {
		int queues = 0;
		int exchanges = 0;
		int bindings = 0;
		boolean verified = true;
		for (Declarable declarable : declarables) {
			if (declarable instanceof Queue queue) {
				if (workQueues.contains(queue.getName())) {
					// The listeners' own queues, declared by the application here: not
					// retry objects.
					continue;
				}
				queues++;
				verified &= run.broker().queueExists(queue.getName());
			}
			else if (declarable instanceof Exchange exchange) {
				exchanges++;
				verified &= run.broker().exchangeExists(exchange.getName());
			}
			else if (declarable instanceof Binding) {
				// The broker has no passive check for bindings; they are counted as
				// declared.
				bindings++;
			}
		}
		return new Verified(new ObjectCounts(queues, exchanges, bindings), verified, listenersOnTheBroker);
	}

	/**
	 * What an application declared for its listeners' retries.
	 *
	 * @param counts the objects
	 * @param verified whether every counted queue and exchange is on the broker
	 * @param listenersOnTheBroker how many listeners' retries RabbitMQ holds (broker
	 * backend)
	 */
	record Verified(ObjectCounts counts, boolean verified, int listenersOnTheBroker) {

	}

}
