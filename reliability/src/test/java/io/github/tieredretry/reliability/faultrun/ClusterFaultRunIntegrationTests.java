package io.github.tieredretry.reliability.faultrun;

import java.util.List;

import io.github.tieredretry.testbrokers.HarnessBrokers;
import io.github.tieredretry.testbrokers.LocalRabbitCluster;
import io.github.tieredretry.testbrokers.LocalRabbitNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The no-loss proof on a three-node RabbitMQ cluster of the harness's own (local nodes on
 * loopback, quorum queues replicated on every node), with two instances of the consuming
 * application on the same retryable listener: the node leading the tier queues is
 * SIGKILLed (and started again later), another node is stopped cleanly and started again,
 * connections are closed on every node, one instance is SIGKILLed; then both instances
 * replay the parking lot at the same time. In CI with 10,000 messages ({@code ./mvnw
 * verify}); the long run is {@code -Dreliability.cluster.messages=100000} (see the
 * module's README).
 * <p>
 * The whole run happens once, before the tests; each test checks one of its promises.
 */
class ClusterFaultRunIntegrationTests {

	private static final int NODES = 3;

	static LocalRabbitCluster cluster;

	static FaultRunReport run;

	static List<ConcurrentReplays.Report> replays;

	@BeforeAll
	static void runOnAThreeNodeCluster() {
		FaultRunSettings settings = FaultRunSettings.forClusterFromSystemProperties();
		cluster = HarnessBrokers.startCluster(settings.workDirectory(), NODES);
		System.out.println("[cluster fault run] broker: " + cluster.description());
		ConcurrentReplays concurrentReplays = new ConcurrentReplays();
		run = new FaultRun(cluster, settings).run(concurrentReplays);
		System.out.println(run.format());
		replays = concurrentReplays.reports();
		replays.forEach((round) -> System.out.println(round.format()));
	}

	@AfterAll
	static void stopCluster() {
		if (cluster != null) {
			cluster.close();
		}
	}

	@Test
	void everyMessageIsProcessedOrParkedWithTheReasonItsPlanCallsForAndNoneIsLost() {
		assertThat(run.stalled()).as("the run stalled").isNull();
		assertThat(run.lost()).as("lost messages (%s)", run.lostExamples()).isZero();
		assertThat(run.lostByBroker()).as("quorum tiers: no loss is excused").isZero();
		assertThat(run.wrongOutcome()).as("messages with an outcome against their plan (%s)", run.wrongExamples())
			.isZero();
		assertThat(run.processedMessages() + run.parkedMessages()).isEqualTo(run.messages());
		assertThat(run.foreignParked()).isZero();
		assertThat(run.duplicateWindows().stream().mapToLong(DuplicateWindows.Window::duplicates).sum())
			.as("duplicates placed in fault windows")
			.isEqualTo(run.duplicates());
	}

	@Test
	void theTierLeaderIsKilledAnotherNodeStoppedConnectionsClosedAndAnInstanceKilledWhileMessagesFlow() {
		assertThat(run.count(FaultRun.FaultType.KILL_TIER_LEADER_NODE)).isEqualTo(1);
		assertThat(run.count(FaultRun.FaultType.STOP_NODE)).isEqualTo(1);
		assertThat(run.count(FaultRun.FaultType.START_NODE)).isEqualTo(2);
		assertThat(run.count(FaultRun.FaultType.CLOSE_ALL_CONNECTIONS)).isEqualTo(3);
		assertThat(run.count(FaultRun.FaultType.KILL_CONSUMER)).isEqualTo(1);
		assertThat(run.consumerInstances()).isEqualTo(2);
		assertThat(run.consumerIncarnations()).isEqualTo(3);
		// Every fault hit a run in progress: some outcomes before it, and more to come
		// after it.
		assertThat(run.faults())
			.allSatisfy((fault) -> assertThat(fault.outcomesBefore()).isBetween(1L, (long) run.messages() - 1));
		assertThat(cluster.nodes()).allMatch(LocalRabbitNode::isRunning);
	}

	@Test
	void workQueueTiersAndParkingLotAreQuorumQueuesWithAMemberOnEveryNode() {
		List<String> nodes = cluster.nodes().stream().map(LocalRabbitNode::node).toList();
		// And the scheduled queue of delayed sends (retry.scheduled: the consumer
		// application has no name), replicated like the tiers.
		assertThat(run.replicas()).containsOnlyKeys(FaultRun.WORK_QUEUE, "retry.delay.250ms", "retry.delay.1s",
				FaultRun.PARKING_LOT, "retry.scheduled");
		assertThat(run.replicas())
			.allSatisfy((queue, members) -> assertThat(members).as(queue).containsExactlyInAnyOrderElementsOf(nodes));
		assertThat(cluster.runningNodes()).containsExactlyInAnyOrderElementsOf(nodes);
	}

	@Test
	void twoInstancesReplayingTheParkingLotAtOnceLoseNothingAndEveryDoubleReplayIsExplained() {
		int parkedCopies = run.parkedCopies().values().stream().mapToInt(Integer::intValue).sum();
		assertThat(replays).extracting(ConcurrentReplays.Report::start)
			.containsExactly(ConcurrentReplays.Start.values());
		assertThat(replays).allSatisfy((round) -> {
			assertThat(round.calls()).hasSize(2);
			assertThat(round.overlapped()).as("both replays ran at the same time: %s", round.calls()).isTrue();
			assertThat(round.messagesBefore()).isEqualTo(run.parkedMessages());
			assertThat(round.copiesBefore()).isEqualTo(parkedCopies);
			assertThat(round.timedOut()).as("every moved copy came back to the parking lot").isFalse();
			assertThat(round.lost()).as("lost by the replays (%s)", round.lostExamples()).isZero();
			assertThat(round.wrong()).as("wrong outcome after the replays (%s)", round.wrongExamples()).isZero();
			assertThat(round.unexplained()).as("double replays without explanation (%s)", round.unexplainedExamples())
				.isZero();
			assertThat(round.newCopies()).as("parked copies published twice").isZero();
			assertThat(round.replaysFound()).as("replays reported as moved that are in the parking lot")
				.isEqualTo(round.moved());
			assertThat(round.calls()).allSatisfy((call) -> assertThat(call.stayed()).as(call.instance()).isZero());
		});
	}

}
