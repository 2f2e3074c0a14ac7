package io.github.tieredretry.reliability.faultrun;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

import com.rabbitmq.client.Connection;
import io.github.tieredretry.reliability.consumer.FaultPlan;
import io.github.tieredretry.reliability.consumer.FaultRunConsumerApplication;
import io.github.tieredretry.testbrokers.HarnessBroker;
import io.github.tieredretry.testbrokers.LocalRabbitCluster;
import io.github.tieredretry.topology.QueueType;
import org.awaitility.core.ConditionTimeoutException;
import org.jspecify.annotations.Nullable;

import static org.awaitility.Awaitility.await;

/**
 * One fault run against the harness's own broker (a node, or a cluster of nodes):
 * <ol>
 * <li>a producer publishes N uniquely identified messages (confirmed) to a retryable
 * listener running in another JVM (or several, side by side): 20% fail 1-3 times then
 * succeed, 2% never succeed, 1% are not retryable;</li>
 * <li>meanwhile, as the consumers make progress, the faults of the settings' schedule: on
 * a single node, all connections are closed 5 times, the consumer JVM is killed with
 * SIGKILL and restarted twice, and the broker is restarted once; on a cluster, see
 * {@link #CLUSTER_SCHEDULE};</li>
 * <li>when every message has an outcome (or nothing has happened for a minute), the
 * parking lot is read and every message is accounted for: processed, or parked with the
 * reason its plan calls for; each duplicate is placed in the window of the last fault
 * before it.</li>
 * </ol>
 * A message neither processed nor parked is lost. With classic tiers one cause is outside
 * the starter: a classic queue dead-letters at most once, so a message that expires in a
 * tier while the broker stops (or crashes) can vanish inside the broker. A lost message
 * whose last confirmed forward put it in a tier it expired from during a broker fault is
 * counted apart, as lost by the broker, whatever the queue type: the test allows such
 * losses for classic tiers only. Each run gets a virtual host of its own, so classic and
 * quorum tiers (same queue names) can follow each other on one node.
 */
final class FaultRun {

	static final String WORK_QUEUE = "fault-run.work";

	static final String PARKING_LOT = "retry.parking-lot";

	/**
	 * The single-node run's faults, each applied once the consumer has produced this
	 * fraction of the run's outcomes.
	 */
	static final List<ScheduledFault> SINGLE_NODE_SCHEDULE = List.of(
			new ScheduledFault(0.05, FaultType.CLOSE_ALL_CONNECTIONS),
			new ScheduledFault(0.12, FaultType.KILL_CONSUMER),
			new ScheduledFault(0.20, FaultType.CLOSE_ALL_CONNECTIONS),
			new ScheduledFault(0.30, FaultType.RESTART_BROKER),
			new ScheduledFault(0.40, FaultType.CLOSE_ALL_CONNECTIONS),
			new ScheduledFault(0.50, FaultType.KILL_CONSUMER),
			new ScheduledFault(0.60, FaultType.CLOSE_ALL_CONNECTIONS),
			new ScheduledFault(0.70, FaultType.CLOSE_ALL_CONNECTIONS));

	/**
	 * How long a node of the cluster run stays down at most before it is started again.
	 */
	private static final Duration NODE_DOWN_AT_MOST = Duration.ofSeconds(20);

	/**
	 * The cluster run's faults: the node leading the tier queues is SIGKILLed and stays
	 * down for a while, comes back, then another node (the one leading most queues by
	 * then) is stopped cleanly and started again; connections are closed on every node
	 * three times and one application instance is SIGKILLed. They begin earlier in the
	 * run than the single node's: node faults take the cluster several seconds each, and
	 * all of them must happen while messages flow.
	 */
	static final List<ScheduledFault> CLUSTER_SCHEDULE = List.of(
			new ScheduledFault(0.04, FaultType.CLOSE_ALL_CONNECTIONS),
			new ScheduledFault(0.08, FaultType.KILL_CONSUMER),
			new ScheduledFault(0.12, FaultType.KILL_TIER_LEADER_NODE),
			new ScheduledFault(0.20, FaultType.CLOSE_ALL_CONNECTIONS),
			new ScheduledFault(0.28, FaultType.START_NODE, NODE_DOWN_AT_MOST),
			new ScheduledFault(0.36, FaultType.STOP_NODE),
			new ScheduledFault(0.44, FaultType.START_NODE, NODE_DOWN_AT_MOST),
			new ScheduledFault(0.52, FaultType.CLOSE_ALL_CONNECTIONS));

	enum FaultType {

		CLOSE_ALL_CONNECTIONS("all connections closed"),

		KILL_CONSUMER("consumer SIGKILLed"),

		RESTART_BROKER("broker restarted"),

		CRASH_BROKER("broker crashed, restarted"),

		KILL_TIER_LEADER_NODE("tier leader node SIGKILLed"),

		STOP_NODE("node stopped cleanly"),

		START_NODE("node started again");

		private final String description;

		FaultType(String description) {
			this.description = description;
		}

		String description() {
			return this.description;
		}

	}

	/**
	 * A fault of the schedule.
	 *
	 * @param atOutcomeFraction applied once the consumers have produced this fraction of
	 * the run's outcomes
	 * @param type what
	 * @param maxWait applied at the latest this long after the previous fault, even
	 * without the outcomes (a crashed node is started again after a while, whether or not
	 * the run still makes progress without it), or {@code null} to wait for the outcomes
	 * only
	 */
	record ScheduledFault(double atOutcomeFraction, FaultType type, @Nullable Duration maxWait) {

		ScheduledFault(double atOutcomeFraction, FaultType type) {
			this(atOutcomeFraction, type, null);
		}

	}

	/**
	 * A fault as it happened.
	 *
	 * @param type what
	 * @param at when, from the start of the run
	 * @param outcomesBefore outcome records the consumer had journaled by then
	 * @param startedAt when it began, epoch milliseconds
	 * @param endedAt when it was over (for a broker fault: the broker was up again),
	 * epoch milliseconds
	 * @param detail which instance or node, leaders, how long it took, what the
	 * instances' health said
	 */
	record AppliedFault(FaultType type, Duration at, long outcomesBefore, long startedAt, long endedAt, String detail) {

		boolean isBrokerFault() {
			return this.type == FaultType.RESTART_BROKER || this.type == FaultType.CRASH_BROKER;
		}

		/**
		 * From when a message leaving a classic tier can be lost by this broker fault. A
		 * clean stop loses only what expires while the queues stop. A crash also loses
		 * what expired just before: the broker had moved it to its queue but not yet
		 * written it (losses seen up to 130 ms before the kill).
		 */
		long brokerLossesFrom() {
			return (this.type == FaultType.CRASH_BROKER) ? this.startedAt - 1_000 : this.startedAt;
		}

	}

	/**
	 * Something to do once every message is accounted for, while the consumers still run
	 * (the cluster run's concurrent replays).
	 */
	@FunctionalInterface
	interface WhileConsumersRun {

		void run(Settled settled);

	}

	/**
	 * A run whose every message has an outcome, with nothing left in its work queue and
	 * tiers, its consumer instances still running and its parking lot untouched.
	 *
	 * @param broker the broker
	 * @param vhost the run's virtual host
	 * @param plans the messages' plans
	 * @param journals the consumers' journals
	 * @param consumers the consumer instances
	 * @param parkingLot reads the parking lot
	 * @param report the run's accounting
	 */
	record Settled(HarnessBroker broker, String vhost, FaultPlans plans, JournalTail journals,
			ConsumerInstances consumers, ParkingLotReader parkingLot, FaultRunReport report) {
	}

	private final HarnessBroker broker;

	private final FaultRunSettings settings;

	private final String vhost;

	private final Path runDirectory;

	private final ParkingLotReader parkingLot;

	private final @Nullable NodeFaults nodeFaults;

	private final ConsumerEndpoints endpoints = new ConsumerEndpoints();

	FaultRun(HarnessBroker broker, FaultRunSettings settings) {
		this.broker = broker;
		this.settings = settings;
		String type = settings.variant();
		this.vhost = "fault-run-" + type + ((settings.batchSize() > 0) ? "-batch" : "");
		this.runDirectory = settings.workDirectory().resolve(type);
		this.parkingLot = new ParkingLotReader(broker, this.vhost, PARKING_LOT, settings.messages());
		this.nodeFaults = (broker instanceof LocalRabbitCluster cluster) ? new NodeFaults(cluster, this.vhost) : null;
	}

	FaultRunReport run() {
		return run(null);
	}

	/**
	 * Run, and account for every message.
	 * @param whileConsumersRun what to do after the accounting, before the consumers
	 * stop; {@code null} to stop them first and drain the parking lot for the accounting
	 * @return the accounting
	 */
	FaultRunReport run(@Nullable WhileConsumersRun whileConsumersRun) {
		prepareRunDirectory();
		this.broker.createVirtualHost(this.vhost);
		declareWorkQueue();
		FaultPlans plans = FaultPlans.generate(this.settings.messages(), this.settings.seed());
		JournalTail journals = new JournalTail(this.runDirectory, this.settings.messages());
		List<AppliedFault> faults = new ArrayList<>();
		Map<String, List<String>> replicas = Map.of();
		String stalled = null;
		long startNanos = System.nanoTime();
		long startedAt = System.currentTimeMillis();
		Duration elapsed;
		FaultRunReport report = null;
		Producer producer = new Producer(this.broker, this.vhost, WORK_QUEUE, plans, () -> journals.refresh().records(),
				this.settings.producerWindow(), this.settings.publishRate());
		Thread producerThread = new Thread(producer, "fault-run-producer");
		try (ConsumerInstances consumers = new ConsumerInstances(this.runDirectory, this.settings.consumerInstances(),
				this.settings.http(), consumerArguments())) {
			consumers.startAll();
			List<ScheduledFault> schedule = this.settings.schedule();
			if (!schedule.isEmpty()) {
				producer.allowUpTo(targetOf(schedule.get(0)) + this.settings.producerWindow());
			}
			producerThread.start();
			// Every fault waits for its share of the outcomes, and for the run to have
			// recovered from the previous fault (new outcomes since), so that each one
			// hits a system that is busy.
			long minimumGap = Math.max(this.settings.messages() / 50, 50);
			long outcomesAtLastFault = 0;
			for (ScheduledFault fault : this.settings.schedule()) {
				// Capped at the message count: when earlier faults came late (a slow
				// broker restart), the gap must not push the last ones beyond the
				// outcomes the run can ever produce.
				long target = Math.min(Math.max(targetOf(fault), outcomesAtLastFault + minimumGap),
						this.settings.messages());
				producer.allowUpTo((int) target + this.settings.producerWindow());
				long previousFaultEnded = faults.isEmpty() ? System.currentTimeMillis()
						: faults.get(faults.size() - 1).endedAt();
				long deadline = (fault.maxWait() != null) ? previousFaultEnded + fault.maxWait().toMillis()
						: Long.MAX_VALUE;
				stalled = awaitProgress(journals, producer, consumers,
						() -> journals.refresh().records() >= target || System.currentTimeMillis() >= deadline);
				if (stalled != null) {
					stalled = "before fault '" + fault.type().description() + "': " + stalled;
					break;
				}
				Duration at = Duration.ofNanos(System.nanoTime() - startNanos);
				outcomesAtLastFault = journals.refresh().records();
				FaultType type = (fault.type() == FaultType.RESTART_BROKER && this.settings.crashBroker())
						? FaultType.CRASH_BROKER : fault.type();
				long faultStartedAt = System.currentTimeMillis();
				String early = (outcomesAtLastFault < target)
						? "after " + fault.maxWait().toSeconds() + " s without reaching " + target + " outcomes; " : "";
				String detail = early + apply(type, consumers);
				faults.add(new AppliedFault(type, at, outcomesAtLastFault, faultStartedAt, System.currentTimeMillis(),
						detail + observeInstances(consumers)));
				log(String.format("%7.1f s: %s after %d outcomes (%d messages confirmed by the broker)%s",
						at.toMillis() / 1000.0, type.description(), outcomesAtLastFault, producer.confirmed(),
						detail.isEmpty() ? "" : ": " + detail));
			}
			producer.allowUpTo(this.settings.messages());
			if (stalled == null) {
				EndOfRun end = new EndOfRun(journals, faults);
				stalled = awaitProgress(journals, producer, consumers,
						() -> producer.confirmed() == this.settings.messages() && end.reached());
			}
			elapsed = Duration.ofNanos(System.nanoTime() - startNanos);
			if (this.broker instanceof LocalRabbitCluster cluster) {
				// Quorum queue members are fixed when the queue is declared: node
				// restarts do not change them.
				replicas = cluster.members(this.vhost);
			}
			awaitInFlightQueuesDrained();
			producer.stop();
			if (whileConsumersRun != null) {
				requireProducerSucceeded(producer);
				journals.refresh();
				report = account(plans, journals, this.parkingLot.browse(), inFlightMessages(), faults, replicas,
						producer, stalled, startedAt, elapsed);
				whileConsumersRun
					.run(new Settled(this.broker, this.vhost, plans, journals, consumers, this.parkingLot, report));
			}
			consumers.stopAll();
		}
		finally {
			producer.stop();
			joinQuietly(producerThread);
		}
		requireProducerSucceeded(producer);
		if (report == null) {
			journals.refresh();
			long stillQueued = inFlightMessages();
			report = account(plans, journals, this.parkingLot.drain(), stillQueued, faults, replicas, producer, stalled,
					startedAt, elapsed);
		}
		return report;
	}

	private int targetOf(ScheduledFault fault) {
		return (int) Math.ceil(fault.atOutcomeFraction() * this.settings.messages());
	}

	private String apply(FaultType type, ConsumerInstances consumers) {
		return switch (type) {
			case CLOSE_ALL_CONNECTIONS -> {
				this.broker.closeAllConnections(this.vhost, "fault run: connections closed");
				yield "";
			}
			case KILL_CONSUMER -> {
				String instance = consumers.killOneAndRestart();
				yield instance.isEmpty() ? "" : "instance " + instance;
			}
			case RESTART_BROKER -> {
				this.broker.restartApplication();
				yield "";
			}
			case CRASH_BROKER -> {
				this.broker.crashAndRestart();
				yield "";
			}
			case KILL_TIER_LEADER_NODE -> nodeFaults().killTierLeader();
			case STOP_NODE -> nodeFaults().stopAnotherLeader();
			case START_NODE -> nodeFaults().startDownNode();
		};
	}

	private NodeFaults nodeFaults() {
		if (this.nodeFaults == null) {
			throw new IllegalStateException("Node faults need a cluster, not " + this.broker.description());
		}
		return this.nodeFaults;
	}

	/**
	 * What the instances' retry health and forward failures say right after a fault, when
	 * they serve HTTP.
	 * @return e.g. {@code ; health a UP, b DOWN (...); forward-failed a 0, b 3}, or empty
	 */
	private String observeInstances(ConsumerInstances consumers) {
		List<Integer> ports = consumers.httpPorts();
		if (ports.isEmpty()) {
			return "";
		}
		List<String> names = consumers.names();
		List<String> health = new ArrayList<>();
		List<String> forwardFailed = new ArrayList<>();
		for (int i = 0; i < ports.size(); i++) {
			health.add(names.get(i) + " " + this.endpoints.retryHealth(ports.get(i)));
			long failed = this.endpoints.retryMessages(ports.get(i), "forward-failed");
			forwardFailed.add(names.get(i) + " " + ((failed < 0) ? "?" : failed));
		}
		return "; retry health " + String.join(", ", health) + "; forward-failed since start "
				+ String.join(", ", forwardFailed);
	}

	private static void requireProducerSucceeded(Producer producer) {
		if (producer.failure() != null) {
			throw new IllegalStateException("The producer failed", producer.failure());
		}
	}

	/**
	 * Wait for a condition as long as the run makes progress: new outcomes or newly
	 * confirmed messages.
	 * @return {@code null} when the condition holds, else why waiting stopped
	 */
	private @Nullable String awaitProgress(JournalTail journals, Producer producer, ConsumerInstances consumers,
			BooleanSupplier condition) {
		while (!condition.getAsBoolean()) {
			requireProducerSucceeded(producer);
			if (!consumers.allAlive()) {
				throw new IllegalStateException(
						"The consuming application died on its own: " + consumers.describeExits());
			}
			long outcomes = journals.records();
			int confirmed = producer.confirmed();
			try {
				await().atMost(this.settings.stallTimeout())
					.pollInSameThread()
					.pollInterval(Duration.ofMillis(100))
					.until(() -> condition.getAsBoolean() || journals.refresh().records() > outcomes
							|| producer.confirmed() > confirmed || !consumers.allAlive());
			}
			catch (ConditionTimeoutException ex) {
				return "no new outcome for " + this.settings.stallTimeout().toSeconds() + " s, with "
						+ journals.settledMessages() + " of " + this.settings.messages() + " messages settled and "
						+ producer.confirmed() + " published; queues: " + this.broker.queueDepths(this.vhost);
			}
		}
		return null;
	}

	/**
	 * Late duplicates may still be in a tier: wait until nothing is left but parked
	 * messages.
	 */
	private void awaitInFlightQueuesDrained() {
		try {
			await().atMost(Duration.ofSeconds(30))
				.pollInSameThread()
				.pollInterval(Duration.ofMillis(500))
				.until(() -> inFlightMessages() == 0);
		}
		catch (ConditionTimeoutException ex) {
			log("Messages still queued after the last outcome: " + this.broker.queueDepths(this.vhost));
		}
	}

	private long inFlightMessages() {
		return this.broker.queueDepths(this.vhost)
			.entrySet()
			.stream()
			.filter((entry) -> !entry.getKey().equals(PARKING_LOT))
			.mapToLong(Map.Entry::getValue)
			.sum();
	}

	private FaultRunReport account(FaultPlans plans, JournalTail journals, List<ParkedCopy> parkedCopiesRead,
			long stillQueued, List<AppliedFault> faults, Map<String, List<String>> replicas, Producer producer,
			@Nullable String stalled, long startedAt, Duration elapsed) {
		Map<Integer, List<ParkedCopy>> parked = new HashMap<>();
		long foreignParked = 0;
		for (ParkedCopy copy : parkedCopiesRead) {
			if (copy.isForeign()) {
				foreignParked++;
			}
			else {
				parked.computeIfAbsent(copy.index(), (key) -> new ArrayList<>()).add(copy);
			}
		}
		DuplicateWindows windows = new DuplicateWindows(startedAt, faults);
		List<Long> outcomeTimes = new ArrayList<>();
		producer.resends().forEach((resend) -> windows.resent(resend[0], resend[1]));
		int processedMessages = 0;
		long processedRecords = 0;
		int parkedMessages = 0;
		Map<String, Integer> parkedCopies = new LinkedHashMap<>();
		int lost = 0;
		int notPublished = 0;
		int lostByBroker = 0;
		List<String> lostByBrokerExamples = new ArrayList<>();
		int wrong = 0;
		long duplicates = 0;
		List<String> lostExamples = new ArrayList<>();
		List<String> wrongExamples = new ArrayList<>();
		for (int index = 0; index < plans.size(); index++) {
			FaultPlan plan = plans.of(index);
			int processed = journals.processedCount(index);
			List<ParkedCopy> copiesOfMessage = parked.getOrDefault(index, List.of());
			List<String> reasons = copiesOfMessage.stream().map(ParkedCopy::reason).toList();
			processedRecords += processed;
			processedMessages += (processed > 0) ? 1 : 0;
			parkedMessages += reasons.isEmpty() ? 0 : 1;
			reasons.forEach((reason) -> parkedCopies.merge(reason, 1, Integer::sum));
			int copies = processed + reasons.size();
			if (copies == 0 && index >= producer.confirmed()) {
				// A run that stalled stops publishing: what the broker never confirmed
				// was never its to lose.
				notPublished++;
				continue;
			}
			if (copies == 0) {
				AppliedFault brokerFault = brokerFaultItExpiredIn(journals, index, faults);
				if (brokerFault != null) {
					lostByBroker++;
					if (lostByBrokerExamples.size() < 10) {
						lostByBrokerExamples.add(FaultPlans.messageId(index) + " (" + plan.headerValue() + ")");
					}
					continue;
				}
				lost++;
				if (lostExamples.size() < 10) {
					lostExamples.add(FaultPlans.messageId(index) + " (" + plan.headerValue() + ")");
				}
				continue;
			}
			duplicates += copies - 1;
			List<Long> parkedAt = copiesOfMessage.stream().map(ParkedCopy::parkedAt).toList();
			windows.duplicatesOf(journals.processingTimes(index), parkedAt);
			outcomeTimes.addAll(journals.processingTimes(index));
			outcomeTimes.addAll(parkedAt);
			boolean asPlanned = plan.endsProcessed() ? reasons.isEmpty() : processed == 0
					&& reasons.stream().allMatch((reason) -> reason.equals(plan.expectedParkedReason()));
			if (!asPlanned) {
				wrong++;
				if (wrongExamples.size() < 10) {
					wrongExamples.add(FaultPlans.messageId(index) + " (" + plan.headerValue() + ": processed "
							+ processed + "x, parked " + reasons + ")");
				}
			}
		}
		return new FaultRunReport(this.settings.queueType(), this.broker.description(), plans.size(), plans.counts(),
				processedMessages, processedRecords, parkedMessages, parkedCopies, journals.settledFromParkingLot(),
				lost, lostExamples, notPublished, lostByBroker, lostByBrokerExamples, wrong, wrongExamples, duplicates,
				windows.windows(), producer.resent(), foreignParked, stillQueued, faults, replicas,
				this.settings.consumerInstances(), countIncarnations(), longestPause(outcomeTimes, startedAt), stalled,
				elapsed);
	}

	/**
	 * The longest time without any outcome, once the first one came: retries that wait in
	 * a tier the broker does not move them out of show here.
	 * @return {@code [from, length]} in milliseconds, from the start of the run
	 */
	private static long[] longestPause(List<Long> outcomeTimes, long startedAt) {
		long[] times = outcomeTimes.stream().mapToLong(Long::longValue).filter((at) -> at > 0).sorted().toArray();
		long[] longest = { 0, 0 };
		for (int i = 1; i < times.length; i++) {
			if (times[i] - times[i - 1] > longest[1]) {
				longest[0] = times[i - 1] - startedAt;
				longest[1] = times[i] - times[i - 1];
			}
		}
		return longest;
	}

	/**
	 * The run is over when every message has an outcome, or when the only ones without
	 * are lost by the broker (see {@link #brokerFaultItExpiredIn}) and the work queue and
	 * tiers have stayed empty for a while (nothing in flight that could still settle
	 * them).
	 */
	private final class EndOfRun {

		private final JournalTail journals;

		private final List<AppliedFault> faults;

		private long quietSince;

		private long parkingLotReadAt;

		EndOfRun(JournalTail journals, List<AppliedFault> faults) {
			this.journals = journals;
			this.faults = faults;
		}

		boolean reached() {
			if (this.journals.refresh().settledMessages() == FaultRun.this.settings.messages()) {
				return true;
			}
			if (inFlightMessages() == 0 && System.currentTimeMillis() - this.parkingLotReadAt >= 1_000) {
				// Nothing left in flight: a message may be parked with its journal line
				// lost to a SIGKILL.
				this.parkingLotReadAt = System.currentTimeMillis();
				this.journals.settleParked(FaultRun.this.parkingLot.browse());
				if (this.journals.settledMessages() == FaultRun.this.settings.messages()) {
					return true;
				}
			}
			if (!onlyLostByBrokerUnsettled() || inFlightMessages() > 0) {
				this.quietSince = 0;
				return false;
			}
			long now = System.currentTimeMillis();
			if (this.quietSince == 0) {
				this.quietSince = now;
			}
			return now - this.quietSince >= 2_000;
		}

		// Quorum tiers keep a message until it is dead-lettered: the run waits for every
		// one (a loss there fails the run, after the stall timeout).
		private boolean onlyLostByBrokerUnsettled() {
			if (FaultRun.this.settings.queueType() != QueueType.CLASSIC) {
				return false;
			}
			for (int index = 0; index < FaultRun.this.settings.messages(); index++) {
				if (!this.journals.isSettled(index)
						&& brokerFaultItExpiredIn(this.journals, index, this.faults) == null) {
					return false;
				}
			}
			return true;
		}

	}

	/**
	 * The broker fault during which a message expired from the tier it was last forwarded
	 * to, and after which the listener never saw it again (had it come back, its loss
	 * would be the starter's). Classic tiers dead-letter at most once and can lose such a
	 * message; quorum tiers dead-letter at least once and must not (the test asserts none
	 * for them).
	 */
	private @Nullable AppliedFault brokerFaultItExpiredIn(JournalTail journals, int index, List<AppliedFault> faults) {
		long[] tierExpiry = journals.lastTierExpiry(index);
		if (tierExpiry == null || journals.lastFailure(index) > tierExpiry[0]) {
			return null;
		}
		return faults.stream()
			.filter(AppliedFault::isBrokerFault)
			.filter((fault) -> tierExpiry[0] <= fault.endedAt() && tierExpiry[1] >= fault.brokerLossesFrom())
			.findFirst()
			.orElse(null);
	}

	private int countIncarnations() {
		try (Stream<Path> files = Files.list(this.runDirectory)) {
			return (int) files.filter((file) -> file.getFileName().toString().startsWith("consumer-")).count();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private List<String> consumerArguments() {
		List<String> arguments = new ArrayList<>(List.of("--spring.rabbitmq.addresses=" + this.broker.addressList(),
				"--spring.rabbitmq.username=" + this.broker.username(),
				"--spring.rabbitmq.password=" + this.broker.password(), "--spring.rabbitmq.virtual-host=" + this.vhost,
				"--fault-run.queue=" + WORK_QUEUE, "--fault-run.concurrency=" + this.settings.consumerConcurrency(),
				"--retry.queue-type=" + this.settings.queueType().name().toLowerCase(Locale.ROOT),
				"--retry.parking-lot=" + PARKING_LOT,
				// Replays are paced for live traffic (50/s by default); here they race
				// each other at full speed.
				"--retry.replay.rate=100000"));
		if (this.settings.brokerBackend()) {
			arguments.addAll(FaultRunConsumerApplication.BROKER_BACKEND_ARGUMENTS);
		}
		if (this.settings.batchSize() > 0) {
			arguments.addAll(
					List.of("--fault-run.batch=true", "--spring.rabbitmq.listener.simple.consumer-batch-enabled=true",
							"--spring.rabbitmq.listener.simple.batch-size=" + this.settings.batchSize()));
		}
		return arguments;
	}

	private void declareWorkQueue() {
		try (Connection connection = this.broker.connect(this.vhost, "fault-run-setup")) {
			connection.createChannel()
				.queueDeclare(WORK_QUEUE, true, false, false, FaultRunConsumerApplication
					.workQueueArguments(this.settings.queueType(), this.settings.brokerBackend()));
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot declare the work queue", ex);
		}
	}

	private void prepareRunDirectory() {
		try {
			if (Files.exists(this.runDirectory)) {
				try (Stream<Path> paths = Files.walk(this.runDirectory)) {
					for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
						Files.delete(path);
					}
				}
			}
			Files.createDirectories(this.runDirectory);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot prepare " + this.runDirectory, ex);
		}
	}

	private static void joinQuietly(Thread thread) {
		try {
			thread.join(Duration.ofSeconds(30).toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void log(String line) {
		System.out.println("[fault run " + this.settings.variant() + "] " + line);
	}

}
