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

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.reliability.broker.HarnessBroker;
import io.github.tieredretry.reliability.consumer.FaultPlan;
import io.github.tieredretry.reliability.consumer.FaultRunConsumerApplication;
import io.github.tieredretry.topology.QueueType;
import org.awaitility.core.ConditionTimeoutException;
import org.jspecify.annotations.Nullable;

import static org.awaitility.Awaitility.await;

/**
 * One fault run against the harness's own broker:
 * <ol>
 * <li>a producer publishes N uniquely identified messages (confirmed) to a retryable listener running
 * in another JVM: 20% fail 1-3 times then succeed, 2% never succeed, 1% are not retryable;</li>
 * <li>meanwhile, as the consumer makes progress: all connections are closed 5 times, the consumer JVM is
 * killed with SIGKILL and restarted twice, and the broker is restarted once;</li>
 * <li>when every message has an outcome (or nothing has happened for a minute), the parking lot is read
 * and every message is accounted for: processed, or parked with the reason its plan calls for.</li>
 * </ol>
 * A message neither processed nor parked is lost. With classic tiers one cause is outside the starter:
 * a classic queue dead-letters at most once, so a message that expires in a tier while the broker stops
 * (or crashes) can vanish inside the broker. A lost message whose last confirmed forward put it in a tier
 * it expired from during a broker fault is counted apart, as lost by the broker; any other loss fails.
 * Each run gets a virtual host of its own, so classic and quorum tiers (same queue names) can follow
 * each other on one node.
 */
final class FaultRun {

	static final String WORK_QUEUE = "fault-run.work";

	static final String PARKING_LOT = "retry.parking-lot";

	/** The faults, each applied once the consumer has produced this fraction of the run's outcomes. */
	private static final List<ScheduledFault> SCHEDULE = List.of(
			new ScheduledFault(0.05, FaultType.CLOSE_ALL_CONNECTIONS),
			new ScheduledFault(0.12, FaultType.KILL_CONSUMER),
			new ScheduledFault(0.20, FaultType.CLOSE_ALL_CONNECTIONS),
			new ScheduledFault(0.30, FaultType.RESTART_BROKER),
			new ScheduledFault(0.40, FaultType.CLOSE_ALL_CONNECTIONS),
			new ScheduledFault(0.50, FaultType.KILL_CONSUMER),
			new ScheduledFault(0.60, FaultType.CLOSE_ALL_CONNECTIONS),
			new ScheduledFault(0.70, FaultType.CLOSE_ALL_CONNECTIONS));

	enum FaultType {

		CLOSE_ALL_CONNECTIONS("all connections closed"),

		KILL_CONSUMER("consumer SIGKILLed"),

		RESTART_BROKER("broker restarted"),

		CRASH_BROKER("broker crashed, restarted");

		private final String description;

		FaultType(String description) {
			this.description = description;
		}

		String description() {
			return this.description;
		}

	}

	record ScheduledFault(double atOutcomeFraction, FaultType type) {
	}

	/**
	 * A fault as it happened.
	 *
	 * @param type what
	 * @param at when, from the start of the run
	 * @param outcomesBefore outcome records the consumer had journaled by then
	 * @param startedAt when it began, epoch milliseconds
	 * @param endedAt when it was over (for a broker fault: the broker was up again), epoch milliseconds
	 */
	record AppliedFault(FaultType type, Duration at, long outcomesBefore, long startedAt, long endedAt) {

		boolean isBrokerFault() {
			return this.type == FaultType.RESTART_BROKER || this.type == FaultType.CRASH_BROKER;
		}

		/**
		 * From when a message leaving a classic tier can be lost by this broker fault. A clean stop loses
		 * only what expires while the queues stop. A crash also loses what expired just before: the broker
		 * had moved it to its queue but not yet written it (losses seen up to 130 ms before the kill).
		 */
		long brokerLossesFrom() {
			return (this.type == FaultType.CRASH_BROKER) ? this.startedAt - 1_000 : this.startedAt;
		}

	}

	private final HarnessBroker broker;

	private final FaultRunSettings settings;

	private final String vhost;

	private final Path runDirectory;

	FaultRun(HarnessBroker broker, FaultRunSettings settings) {
		this.broker = broker;
		this.settings = settings;
		String type = settings.queueType().name().toLowerCase(Locale.ROOT);
		this.vhost = "fault-run-" + type;
		this.runDirectory = settings.workDirectory().resolve(type);
	}

	FaultRunReport run() {
		prepareRunDirectory();
		this.broker.createVirtualHost(this.vhost);
		declareWorkQueue();
		FaultPlans plans = FaultPlans.generate(this.settings.messages(), this.settings.seed());
		JournalTail journals = new JournalTail(this.runDirectory, this.settings.messages());
		List<AppliedFault> faults = new ArrayList<>();
		String stalled = null;
		long startNanos = System.nanoTime();
		Duration elapsed;
		Producer producer = new Producer(this.broker, this.vhost, WORK_QUEUE, plans, () -> journals.refresh().records(),
				this.settings.producerWindow());
		Thread producerThread = new Thread(producer, "fault-run-producer");
		try (ConsumerProcess consumer = new ConsumerProcess(this.runDirectory, consumerArguments())) {
			consumer.start();
			producerThread.start();
			// Every fault waits for its share of the outcomes, and for the run to have recovered from the
			// previous fault (new outcomes since), so that each one hits a system that is busy.
			long minimumGap = Math.max(this.settings.messages() / 50, 50);
			long outcomesAtLastFault = 0;
			for (ScheduledFault fault : SCHEDULE) {
				// Capped at the message count: when earlier faults came late (a slow broker restart), the gap
				// must not push the last ones beyond the outcomes the run can ever produce.
				long target = Math.min(Math.max((long) Math.ceil(fault.atOutcomeFraction() * this.settings.messages()),
						outcomesAtLastFault + minimumGap), this.settings.messages());
				stalled = awaitProgress(journals, producer, consumer, () -> journals.refresh().records() >= target);
				if (stalled != null) {
					stalled = "before fault '" + fault.type().description() + "': " + stalled;
					break;
				}
				Duration at = Duration.ofNanos(System.nanoTime() - startNanos);
				outcomesAtLastFault = journals.refresh().records();
				FaultType type = (fault.type() == FaultType.RESTART_BROKER && this.settings.crashBroker())
						? FaultType.CRASH_BROKER : fault.type();
				long startedAt = System.currentTimeMillis();
				apply(type, consumer);
				faults.add(new AppliedFault(type, at, outcomesAtLastFault, startedAt, System.currentTimeMillis()));
				log(String.format("%7.1f s: %s after %d outcomes (%d messages confirmed by the broker)",
						at.toMillis() / 1000.0, type.description(), outcomesAtLastFault, producer.confirmed()));
			}
			if (stalled == null) {
				EndOfRun end = new EndOfRun(journals, faults);
				stalled = awaitProgress(journals, producer, consumer,
						() -> producer.confirmed() == this.settings.messages() && end.reached());
			}
			elapsed = Duration.ofNanos(System.nanoTime() - startNanos);
			awaitInFlightQueuesDrained();
			producer.stop();
			consumer.stop();
		}
		finally {
			producer.stop();
			joinQuietly(producerThread);
		}
		if (producer.failure() != null) {
			throw new IllegalStateException("The producer failed", producer.failure());
		}
		journals.refresh();
		long stillQueued = inFlightMessages();
		Map<Integer, List<String>> parked = new HashMap<>();
		long foreignParked = drainParkingLot(parked);
		return account(plans, journals, parked, foreignParked, stillQueued, faults, producer, stalled, elapsed);
	}

	private void apply(FaultType type, ConsumerProcess consumer) {
		switch (type) {
			case CLOSE_ALL_CONNECTIONS -> this.broker.closeAllConnections(this.vhost, "fault run: connections closed");
			case KILL_CONSUMER -> {
				consumer.kill();
				consumer.start();
			}
			case RESTART_BROKER -> this.broker.restartApplication();
			case CRASH_BROKER -> this.broker.crashAndRestart();
		}
	}

	/**
	 * Wait for a condition as long as the run makes progress: new outcomes or newly confirmed messages.
	 * @return {@code null} when the condition holds, else why waiting stopped
	 */
	private @Nullable String awaitProgress(JournalTail journals, Producer producer, ConsumerProcess consumer,
			BooleanSupplier condition) {
		while (!condition.getAsBoolean()) {
			if (producer.failure() != null) {
				throw new IllegalStateException("The producer failed", producer.failure());
			}
			if (!consumer.isAlive()) {
				throw new IllegalStateException(
						"The consuming application died on its own: " + consumer.describeExit());
			}
			long outcomes = journals.records();
			int confirmed = producer.confirmed();
			try {
				await().atMost(this.settings.stallTimeout())
					.pollInSameThread()
					.pollInterval(Duration.ofMillis(100))
					.until(() -> condition.getAsBoolean() || journals.refresh().records() > outcomes
							|| producer.confirmed() > confirmed || !consumer.isAlive());
			}
			catch (ConditionTimeoutException ex) {
				return "no new outcome for " + this.settings.stallTimeout().toSeconds() + " s, with "
						+ journals.settledMessages() + " of " + this.settings.messages() + " messages settled and "
						+ producer.confirmed() + " published; queues: " + this.broker.queueDepths(this.vhost);
			}
		}
		return null;
	}

	/** Late duplicates may still be in a tier: wait until nothing is left but parked messages. */
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

	private long drainParkingLot(Map<Integer, List<String>> parked) {
		long foreign = 0;
		try (Connection connection = this.broker.connect(this.vhost, "fault-run-accounting")) {
			Channel channel = connection.createChannel();
			GetResponse response;
			while ((response = channel.basicGet(PARKING_LOT, true)) != null) {
				String messageId = response.getProps().getMessageId();
				int index = (messageId != null) ? FaultPlans.indexOf(messageId) : -1;
				if (index < 0 || index >= this.settings.messages()) {
					foreign++;
					continue;
				}
				Map<String, Object> headers = response.getProps().getHeaders();
				Object reason = (headers != null) ? headers.get(RetryHeaders.PARKED_REASON) : null;
				parked.computeIfAbsent(index, (key) -> new ArrayList<>())
					.add((reason != null) ? reason.toString() : "(no reason: unroutable)");
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read the parking lot", ex);
		}
		return foreign;
	}

	private FaultRunReport account(FaultPlans plans, JournalTail journals, Map<Integer, List<String>> parked,
			long foreignParked, long stillQueued, List<AppliedFault> faults, Producer producer,
			@Nullable String stalled, Duration elapsed) {
		int processedMessages = 0;
		long processedRecords = 0;
		int parkedMessages = 0;
		Map<String, Integer> parkedCopies = new LinkedHashMap<>();
		int lost = 0;
		int lostByBroker = 0;
		List<String> lostByBrokerExamples = new ArrayList<>();
		int wrong = 0;
		long duplicates = 0;
		List<String> lostExamples = new ArrayList<>();
		List<String> wrongExamples = new ArrayList<>();
		for (int index = 0; index < plans.size(); index++) {
			FaultPlan plan = plans.of(index);
			int processed = journals.processedCount(index);
			List<String> reasons = parked.getOrDefault(index, List.of());
			processedRecords += processed;
			processedMessages += (processed > 0) ? 1 : 0;
			parkedMessages += reasons.isEmpty() ? 0 : 1;
			reasons.forEach((reason) -> parkedCopies.merge(reason, 1, Integer::sum));
			int copies = processed + reasons.size();
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
		return new FaultRunReport(this.settings.queueType(), this.broker.description(), plans.size(),
				plans.counts(), processedMessages, processedRecords, parkedMessages, parkedCopies, lost, lostExamples,
				lostByBroker, lostByBrokerExamples,
				wrong, wrongExamples, duplicates, producer.resent(), foreignParked, stillQueued, faults,
				countIncarnations(), stalled, elapsed);
	}

	/**
	 * The run is over when every message has an outcome, or when the only ones without are lost by the
	 * broker (see {@link #brokerFaultItExpiredIn}) and the work queue and tiers have stayed empty for a
	 * while (nothing in flight that could still settle them).
	 */
	private final class EndOfRun {

		private final JournalTail journals;

		private final List<AppliedFault> faults;

		private long quietSince;

		EndOfRun(JournalTail journals, List<AppliedFault> faults) {
			this.journals = journals;
			this.faults = faults;
		}

		boolean reached() {
			if (this.journals.refresh().settledMessages() == FaultRun.this.settings.messages()) {
				return true;
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

		private boolean onlyLostByBrokerUnsettled() {
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
	 * The broker fault during which a message expired from the classic tier it was last forwarded to, and
	 * after which the listener never saw it again (had it come back, its loss would be the starter's).
	 * Quorum tiers dead-letter at least once: nothing is lost by the broker there, every loss counts.
	 */
	private @Nullable AppliedFault brokerFaultItExpiredIn(JournalTail journals, int index, List<AppliedFault> faults) {
		long[] tierExpiry = journals.lastTierExpiry(index);
		if (tierExpiry == null || this.settings.queueType() != QueueType.CLASSIC
				|| journals.lastFailure(index) > tierExpiry[0]) {
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
		return List.of("--spring.rabbitmq.host=" + this.broker.host(), "--spring.rabbitmq.port=" + this.broker.port(),
				"--spring.rabbitmq.username=" + this.broker.username(),
				"--spring.rabbitmq.password=" + this.broker.password(),
				"--spring.rabbitmq.virtual-host=" + this.vhost, "--fault-run.queue=" + WORK_QUEUE,
				"--fault-run.concurrency=" + this.settings.consumerConcurrency(),
				"--retry.queue-type=" + this.settings.queueType().name().toLowerCase(Locale.ROOT),
				"--retry.parking-lot=" + PARKING_LOT);
	}

	private void declareWorkQueue() {
		try (Connection connection = this.broker.connect(this.vhost, "fault-run-setup")) {
			connection.createChannel()
				.queueDeclare(WORK_QUEUE, true, false, false,
						FaultRunConsumerApplication.workQueueArguments(this.settings.queueType()));
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
		System.out.println("[fault run " + this.settings.queueType().name().toLowerCase(Locale.ROOT) + "] " + line);
	}

}
