package io.github.tieredretry.reliability.faultrun;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import io.github.tieredretry.reliability.consumer.FaultPlan;
import io.github.tieredretry.topology.QueueType;
import org.jspecify.annotations.Nullable;

/**
 * The accounting of a fault run: every message must be processed (journaled by the
 * consumer) or parked with the reason its plan calls for.
 *
 * @param queueType the run's queue type
 * @param broker the broker it ran against
 * @param messages messages published
 * @param plan messages per planned behaviour
 * @param processedMessages messages processed at least once
 * @param processedRecords processing records, duplicates included
 * @param parkedMessages messages parked at least once
 * @param parkedCopies parked copies, duplicates included, by reason
 * @param parkedWithoutJournalLine parked messages the journals never reported (their
 * consumer was killed between the ack and the event), counted from the parking lot
 * @param lost messages neither processed nor parked
 * @param lostExamples a few lost messages, with their plan
 * @param notPublished messages the producer had not published (confirmed) when the run
 * stopped: only a stalled run has any; neither processed, parked nor lost
 * @param lostByBroker lost messages that expired from a tier during a broker restart or
 * crash, not counted in {@code lost}: classic queues dead-letter at most once and may
 * lose these, quorum tiers must not
 * @param lostByBrokerExamples a few of those
 * @param wrongOutcome messages processed or parked against their plan (or parked for the
 * wrong reason)
 * @param wrongExamples a few of those
 * @param duplicates copies beyond the first outcome of each message
 * @param duplicateWindows the duplicates by the fault window they happened in
 * @param producerResends messages the producer published again because a batch was not
 * confirmed
 * @param foreignParked parked messages that are not the run's
 * @param stillQueued messages left in the work queue and tiers at the end
 * @param faults the faults applied, in order
 * @param replicas on a cluster, the members of each queue when the faults began (empty on
 * a single node)
 * @param consumerInstances how many consumer instances ran side by side
 * @param consumerIncarnations how many consumer processes ran, all instances together
 * @param longestPause the longest time without any outcome: {@code [from, length]} in
 * milliseconds from the start of the run
 * @param stalled why the run stopped waiting early, or {@code null}
 * @param elapsed from the first publish to the last outcome
 */
record FaultRunReport(QueueType queueType, String broker, int messages, Map<FaultPlan.Behaviour, Integer> plan,
		int processedMessages, long processedRecords, int parkedMessages, Map<String, Integer> parkedCopies,
		int parkedWithoutJournalLine, int lost, List<String> lostExamples, int notPublished, int lostByBroker,
		List<String> lostByBrokerExamples, int wrongOutcome, List<String> wrongExamples, long duplicates,
		List<DuplicateWindows.Window> duplicateWindows, long producerResends, long foreignParked, long stillQueued,
		List<FaultRun.AppliedFault> faults, Map<String, List<String>> replicas, int consumerInstances,
		int consumerIncarnations, long[] longestPause, @Nullable String stalled, Duration elapsed) {

	long count(FaultRun.FaultType type) {
		return this.faults.stream().filter((fault) -> fault.type() == type).count();
	}

	long brokerFaults() {
		return count(FaultRun.FaultType.RESTART_BROKER) + count(FaultRun.FaultType.CRASH_BROKER);
	}

	String format() {
		List<String> lines = new ArrayList<>();
		lines.add("");
		lines.add("=== Fault run: " + this.queueType.name().toLowerCase(Locale.ROOT) + " tiers, " + this.messages
				+ " messages, " + this.broker + " ===");
		lines.add(String.format(
				"plan         : %d succeed, %d fail 1-3 times then succeed, %d never succeed, %d not retryable",
				this.plan.getOrDefault(FaultPlan.Behaviour.SUCCEED, 0),
				this.plan.getOrDefault(FaultPlan.Behaviour.FAIL_THEN_SUCCEED, 0),
				this.plan.getOrDefault(FaultPlan.Behaviour.NEVER_SUCCEED, 0),
				this.plan.getOrDefault(FaultPlan.Behaviour.NOT_RETRYABLE, 0)));
		if (this.replicas.isEmpty()) {
			lines.add(String.format(
					"faults       : connections closed %dx, consumer SIGKILLed %dx (%d consumer JVMs), "
							+ "broker restarted %dx%s",
					count(FaultRun.FaultType.CLOSE_ALL_CONNECTIONS), count(FaultRun.FaultType.KILL_CONSUMER),
					this.consumerIncarnations, brokerFaults(),
					(count(FaultRun.FaultType.CRASH_BROKER) > 0) ? " (crash: SIGKILL)" : " (stop_app/start_app)"));
		}
		else {
			this.replicas.forEach((queue, members) -> lines.add(String.format("replicas     : %-20s %d members %s",
					queue, members.size(), members.stream().map(NodeFaults::label).toList())));
			lines.add(String.format("faults       : connections closed on every node %dx, %d consumer instances with "
					+ "one SIGKILLed %dx (%d consumer JVMs), tier leader node SIGKILLed %dx, node stopped cleanly %dx, "
					+ "nodes started again %dx", count(FaultRun.FaultType.CLOSE_ALL_CONNECTIONS),
					this.consumerInstances, count(FaultRun.FaultType.KILL_CONSUMER), this.consumerIncarnations,
					count(FaultRun.FaultType.KILL_TIER_LEADER_NODE), count(FaultRun.FaultType.STOP_NODE),
					count(FaultRun.FaultType.START_NODE)));
		}
		for (FaultRun.AppliedFault fault : this.faults) {
			lines.add(String.format("               %7.1f s  %-26s after %d outcomes, took %.1f s%s",
					fault.at().toMillis() / 1000.0, fault.type().description(), fault.outcomesBefore(),
					(fault.endedAt() - fault.startedAt()) / 1000.0,
					fault.detail().isEmpty() ? "" : "\n                          " + fault.detail()));
		}
		lines.add(String.format("processed    : %d messages (%d records)", this.processedMessages,
				this.processedRecords));
		lines.add(String.format("parked       : %d messages (copies by reason: %s)%s", this.parkedMessages,
				new TreeMap<>(this.parkedCopies),
				(this.parkedWithoutJournalLine == 0) ? ""
						: "; " + this.parkedWithoutJournalLine + " without a journal line (their consumer was killed "
								+ "between the park's ack and its event), seen in the parking lot"));
		lines.add(String.format("LOST         : %d%s", this.lost,
				this.lostExamples.isEmpty() ? "" : "  e.g. " + this.lostExamples));
		if (this.notPublished > 0) {
			lines.add(String.format("not published: %d (the run stalled before the producer published them)",
					this.notPublished));
		}
		if (this.lostByBroker > 0) {
			lines.add(String.format(
					"lost by broker: %d, expired from a %s tier during the broker restart or crash "
							+ "(classic queues dead-letter at most once; quorum tiers must not lose these)  e.g. %s",
					this.lostByBroker, this.queueType.name().toLowerCase(Locale.ROOT), this.lostByBrokerExamples));
		}
		lines.add(String.format("wrong outcome: %d%s", this.wrongOutcome,
				this.wrongExamples.isEmpty() ? "" : "  e.g. " + this.wrongExamples));
		lines.add(String.format("duplicates   : %d (allowed: at-least-once); producer re-sent %d", this.duplicates,
				this.producerResends));
		for (DuplicateWindows.Window window : this.duplicateWindows) {
			lines.add(
					String.format(
							"               %7.1f s  %-26s %4d processed again, %3d parked again, producer "
									+ "re-sent %d",
							window.from().toMillis() / 1000.0, window.label(), window.processed(), window.parked(),
							window.resent()));
		}
		if (this.foreignParked > 0 || this.stillQueued > 0) {
			lines.add(String.format("other        : %d foreign parked messages, %d messages still queued",
					this.foreignParked, this.stillQueued));
		}
		if (this.stalled != null) {
			lines.add("stalled      : " + this.stalled);
		}
		lines.add(String.format("longest pause: %.1f s without any outcome, from %.1f s", this.longestPause[1] / 1000.0,
				this.longestPause[0] / 1000.0));
		lines.add(String.format("elapsed      : %.1f s", this.elapsed.toMillis() / 1000.0));
		return String.join(System.lineSeparator(), lines);
	}

}
