package io.github.tieredretry.reliability.faultrun;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.IntStream;

import io.github.tieredretry.reliability.consumer.FaultPlan;
import org.awaitility.core.ConditionTimeoutException;
import tools.jackson.databind.JsonNode;

import static org.awaitility.Awaitility.await;

/**
 * Every consumer instance replays the same parking lot through its retry endpoint
 * ({@code POST /actuator/retry/parking-lot/replay} with {@code {"queue":
 * "fault-run.work"}}), once the fault run has accounted for every message, in two rounds:
 * all instances at the same moment, then again with the second instance beginning once
 * the first has moved a tenth of the parking lot (both still run side by side). The
 * parked messages all fail again (they never succeed, or are not retryable), so every
 * copy that a replay moved comes back to the parking lot with one replay more in
 * {@code retry-replay-count}; each round compares the parking lot before and after,
 * message by message:
 * <ul>
 * <li>lost: a message parked before and neither parked nor processed after;</li>
 * <li>wrong: a message processed (its plan never succeeds), or parked again with another
 * reason;</li>
 * <li>replayed twice: a copy replayed twice in the round. It is explained when the
 * message's deliveries show both replays, one after the other: one operation replayed it,
 * it failed and was parked again at the parking lot's tail, and the other operation,
 * which had begun after that first replay, took it for a message parked before it began
 * (an operation stops only at copies replayed at or after its own start) and replayed it
 * again;</li>
 * <li>new copies: more copies of a message after than before, which only a replay that
 * published a parked copy twice could make;</li>
 * <li>moves that never arrived: the replays' {@code moved} against the replays found in
 * the parking lot.</li>
 * </ul>
 */
final class ConcurrentReplays implements FaultRun.WhileConsumersRun {

	/** How the instances begin their replays. */
	enum Start {

		/** All at the same moment. */
		TOGETHER("at the same time"),

		/** The second once the first has moved a tenth of the parking lot. */
		STAGGERED("the second once the first has moved a tenth");

		private final String description;

		Start(String description) {
			this.description = description;
		}

	}

	private final ConsumerEndpoints endpoints = new ConsumerEndpoints();

	private final List<Report> reports = new ArrayList<>();

	/**
	 * One instance's replay call.
	 *
	 * @param instance the instance
	 * @param sentAt when the request was sent, epoch milliseconds
	 * @param answeredAt when the answer came, epoch milliseconds
	 * @param moved copies moved to the work queue
	 * @param stayed copies that stayed parked
	 * @param stayedByReason why they stayed
	 * @param scanned copies looked at
	 */
	record ReplayCall(String instance, long sentAt, long answeredAt, int moved, int stayed, String stayedByReason,
			int scanned) {
	}

	/**
	 * The accounting of one round of concurrent replays.
	 *
	 * @param start how the instances began
	 * @param calls each instance's replay call
	 * @param messagesBefore messages parked before the replays
	 * @param copiesBefore parked copies before the replays
	 * @param messagesAfter of those, messages parked after
	 * @param copiesAfter parked copies after
	 * @param settledIn from the first request until every moved copy was parked again
	 * @param lost messages parked before, neither parked nor processed after
	 * @param lostExamples a few of those
	 * @param wrong messages processed during the replays, or parked again with another
	 * reason
	 * @param wrongExamples a few of those
	 * @param replayedTwice messages with a copy replayed twice
	 * @param explainedExamples a few of those, with the times of their two replays
	 * @param unexplained messages replayed twice without a first and a later second
	 * replay in their deliveries
	 * @param unexplainedExamples a few of those
	 * @param newCopies copies beyond those parked before (a parked copy published twice)
	 * @param replaysFound replays recorded in the parked copies
	 * ({@code retry-replay-count}, summed)
	 * @param timedOut whether waiting for the moved copies to come back gave up
	 */
	record Report(Start start, List<ReplayCall> calls, int messagesBefore, int copiesBefore, int messagesAfter,
			int copiesAfter, Duration settledIn, int lost, List<String> lostExamples, int wrong,
			List<String> wrongExamples, int replayedTwice, List<String> explainedExamples, int unexplained,
			List<String> unexplainedExamples, int newCopies, long replaysFound, boolean timedOut) {

		int moved() {
			return this.calls.stream().mapToInt(ReplayCall::moved).sum();
		}

		/**
		 * Whether every call was sent before every other one was answered.
		 * @return whether the replays ran at the same time
		 */
		boolean overlapped() {
			long lastSent = this.calls.stream().mapToLong(ReplayCall::sentAt).max().orElse(0);
			long firstAnswered = this.calls.stream().mapToLong(ReplayCall::answeredAt).min().orElse(0);
			return lastSent <= firstAnswered;
		}

		String format() {
			long start = this.calls.stream().mapToLong(ReplayCall::sentAt).min().orElse(0);
			List<String> lines = new ArrayList<>();
			lines.add("");
			lines.add("=== Concurrent replays: " + this.calls.size() + " instances replay " + FaultRun.PARKING_LOT
					+ " (origin " + FaultRun.WORK_QUEUE + "), " + this.start.description + " ===");
			lines.add(String.format("parked before : %d messages (%d copies)", this.messagesBefore, this.copiesBefore));
			for (ReplayCall call : this.calls) {
				lines.add(String.format("instance %-5s: +%d ms .. +%d ms  moved %d, stayed %d %s, scanned %d",
						call.instance(), call.sentAt() - start, call.answeredAt() - start, call.moved(), call.stayed(),
						call.stayedByReason(), call.scanned()));
			}
			lines.add(String.format(
					"parked after  : %d of those messages (%d copies), all moved copies parked again "
							+ "%.1f s after the first request%s",
					this.messagesAfter, this.copiesAfter, this.settledIn.toMillis() / 1000.0,
					this.timedOut ? " (GAVE UP WAITING)" : ""));
			lines.add(String.format("LOST          : %d%s", this.lost,
					this.lostExamples.isEmpty() ? "" : "  e.g. " + this.lostExamples));
			lines.add(String.format("wrong outcome : %d%s", this.wrong,
					this.wrongExamples.isEmpty() ? "" : "  e.g. " + this.wrongExamples));
			lines.add(String.format(
					"replayed twice: %d messages (replayed by one operation, failed again, parked "
							+ "again, replayed again by the other operation, which began after the first replay)%s",
					this.replayedTwice, this.explainedExamples.isEmpty() ? "" : "  e.g. " + this.explainedExamples));
			lines.add(String.format("unexplained   : %d%s", this.unexplained,
					this.unexplainedExamples.isEmpty() ? "" : "  e.g. " + this.unexplainedExamples));
			lines.add(String.format("moved %d, replays found in the parking lot %d, new copies %d", moved(),
					this.replaysFound, this.newCopies));
			return String.join(System.lineSeparator(), lines);
		}

	}

	@Override
	public void run(FaultRun.Settled settled) {
		for (Start start : Start.values()) {
			this.reports.add(round(settled, start));
		}
	}

	/**
	 * The accounting of each round, once {@link #run} ran.
	 * @return the reports, in the order of the rounds
	 */
	List<Report> reports() {
		if (this.reports.isEmpty()) {
			throw new IllegalStateException("The concurrent replays did not run");
		}
		return List.copyOf(this.reports);
	}

	private Report round(FaultRun.Settled settled, Start start) {
		List<ParkedCopy> before = settled.parkingLot().browse();
		JournalTail journals = settled.journals().refresh();
		long recordsBefore = journals.records();
		int[] processedBefore = IntStream.range(0, settled.plans().size()).map(journals::processedCount).toArray();
		List<ReplayCall> calls = replay(settled, start, before.size());
		long firstSent = calls.stream().mapToLong(ReplayCall::sentAt).min().orElseThrow();
		int moved = calls.stream().mapToInt(ReplayCall::moved).sum();
		boolean timedOut = false;
		try {
			// Each moved copy fails again and is parked again (journaled); nothing else
			// is in flight.
			await().atMost(Duration.ofMinutes(2))
				.pollInterval(Duration.ofMillis(250))
				.until(() -> journals.refresh().records() >= recordsBefore + moved
						&& settled.parkingLot().depth() >= before.size());
		}
		catch (ConditionTimeoutException ex) {
			timedOut = true;
		}
		Duration settledIn = Duration.ofMillis(System.currentTimeMillis() - firstSent);
		List<ParkedCopy> after = settled.parkingLot().browse();
		return account(settled, start, before, after, processedBefore, calls, settledIn, timedOut);
	}

	/**
	 * Call every instance's replay, each on a thread of its own (the common pool may have
	 * a single thread on a small machine): all at once, or the others once the first has
	 * moved a tenth of the parking lot (or is done).
	 */
	private List<ReplayCall> replay(FaultRun.Settled settled, Start start, int parked) {
		ConsumerInstances consumers = settled.consumers();
		List<Integer> ports = consumers.httpPorts();
		List<String> names = consumers.names();
		CyclicBarrier together = new CyclicBarrier((start == Start.TOGETHER) ? ports.size() : 1);
		ExecutorService callers = Executors.newFixedThreadPool(ports.size());
		List<CompletableFuture<ReplayCall>> calls = new ArrayList<>();
		try {
			for (int i = 0; i < ports.size(); i++) {
				if (start == Start.STAGGERED && i > 0) {
					// The listeners journal every delivery of a replayed message: a tenth
					// of the parking lot delivered means the first replay has moved at
					// least that much.
					CompletableFuture<ReplayCall> first = calls.get(0);
					long deliveredBefore = settled.journals().refresh().replayedDeliveries();
					await().atMost(Duration.ofMinutes(2))
						.pollInterval(Duration.ofMillis(20))
						.until(() -> first.isDone() || settled.journals().refresh().replayedDeliveries()
								- deliveredBefore >= Math.max(1, parked / 10));
				}
				int port = ports.get(i);
				String instance = names.get(i);
				calls.add(CompletableFuture.supplyAsync(() -> {
					awaitTogether(together);
					long sentAt = System.currentTimeMillis();
					JsonNode answer = this.endpoints.replay(port, FaultRun.WORK_QUEUE);
					return new ReplayCall(instance, sentAt, System.currentTimeMillis(), answer.path("moved").asInt(),
							answer.path("stayed").asInt(), answer.path("stayedByReason").toString(),
							answer.path("scanned").asInt());
				}, callers));
			}
			return calls.stream().map(CompletableFuture::join).toList();
		}
		finally {
			callers.shutdown();
		}
	}

	private static Report account(FaultRun.Settled settled, Start start, List<ParkedCopy> before,
			List<ParkedCopy> after, int[] processedBefore, List<ReplayCall> calls, Duration settledIn,
			boolean timedOut) {
		Map<Integer, List<ParkedCopy>> copiesBefore = byMessage(before);
		Map<Integer, List<ParkedCopy>> copiesAfter = byMessage(after);
		JournalTail journals = settled.journals().refresh();
		long firstSent = calls.stream().mapToLong(ReplayCall::sentAt).min().orElse(0);
		long lastAnswered = calls.stream().mapToLong(ReplayCall::answeredAt).max().orElse(0);
		int lost = 0;
		int wrong = 0;
		int replayedTwice = 0;
		int unexplained = 0;
		int newCopies = 0;
		List<String> lostExamples = new ArrayList<>();
		List<String> wrongExamples = new ArrayList<>();
		List<String> explainedExamples = new ArrayList<>();
		List<String> unexplainedExamples = new ArrayList<>();
		long replaysFound = after.stream().filter((copy) -> !copy.isForeign()).mapToLong(ParkedCopy::replayCount).sum()
				- before.stream().filter((copy) -> !copy.isForeign()).mapToLong(ParkedCopy::replayCount).sum();
		for (Map.Entry<Integer, List<ParkedCopy>> entry : copiesBefore.entrySet()) {
			int index = entry.getKey();
			String id = FaultPlans.messageId(index);
			FaultPlan plan = settled.plans().of(index);
			List<ParkedCopy> now = copiesAfter.getOrDefault(index, List.of());
			boolean processed = journals.processedCount(index) > processedBefore[index];
			if (now.isEmpty() && !processed) {
				lost++;
				addExample(lostExamples, id + " (" + plan.headerValue() + ")");
				continue;
			}
			if (processed || !now.stream().allMatch((copy) -> copy.reason().equals(plan.expectedParkedReason()))) {
				wrong++;
				addExample(wrongExamples, id + " (" + plan.headerValue() + ": processed during the replays " + processed
						+ ", parked " + now.stream().map(ParkedCopy::reason).toList() + ")");
			}
			newCopies += Math.max(0, now.size() - entry.getValue().size());
			long replaysBefore = entry.getValue().stream().mapToLong(ParkedCopy::replayCount).max().orElse(0);
			long replaysNow = now.stream().mapToLong(ParkedCopy::replayCount).max().orElse(0);
			if (replaysNow - replaysBefore >= 2) {
				replayedTwice++;
				Map<Long, Long> replays = journals.replays(index);
				Long first = replays.get(replaysBefore + 1);
				Long second = replays.get(replaysBefore + 2);
				if (replaysNow - replaysBefore == 2 && first != null && second != null && firstSent <= first
						&& first < second && second <= lastAnswered) {
					addExample(explainedExamples, id + " replayed at +" + (first - firstSent) + " ms and again at +"
							+ (second - firstSent) + " ms");
				}
				else {
					unexplained++;
					addExample(unexplainedExamples, id + " (its deliveries show replays " + replays + ")");
				}
			}
		}
		int messagesAfter = (int) copiesBefore.keySet().stream().filter(copiesAfter::containsKey).count();
		int copiesAfterCount = copiesAfter.values().stream().mapToInt(List::size).sum();
		return new Report(start, calls, copiesBefore.size(), before.size(), messagesAfter, copiesAfterCount, settledIn,
				lost, lostExamples, wrong, wrongExamples, replayedTwice, explainedExamples, unexplained,
				unexplainedExamples, newCopies, replaysFound, timedOut);
	}

	private static Map<Integer, List<ParkedCopy>> byMessage(List<ParkedCopy> copies) {
		Map<Integer, List<ParkedCopy>> byMessage = new HashMap<>();
		copies.stream()
			.filter((copy) -> !copy.isForeign())
			.forEach((copy) -> byMessage.computeIfAbsent(copy.index(), (key) -> new ArrayList<>()).add(copy));
		return byMessage;
	}

	private static void addExample(List<String> examples, String example) {
		if (examples.size() < 5) {
			examples.add(example);
		}
	}

	private static void awaitTogether(CyclicBarrier barrier) {
		try {
			barrier.await();
		}
		catch (Exception ex) {
			throw new IllegalStateException("The replays could not start together", ex);
		}
	}

}
