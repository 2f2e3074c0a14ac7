package io.github.tieredretry.reliability.faultrun;

import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.testbrokers.LocalRabbitCluster;
import io.github.tieredretry.testbrokers.LocalRabbitNode;
import org.jspecify.annotations.Nullable;

/**
 * The cluster run's node faults, each described for the report with the leaders before
 * and after:
 * <ul>
 * <li>SIGKILL of the node that leads (most of) the tier queues, which stays down until
 * the next start;</li>
 * <li>a clean stop of another node: the one leading most of the run's queues, not the one
 * killed before;</li>
 * <li>a start of the node that is down.</li>
 * </ul>
 */
final class NodeFaults {

	private final LocalRabbitCluster cluster;

	private final String vhost;

	private @Nullable LocalRabbitNode down;

	private @Nullable LocalRabbitNode killed;

	NodeFaults(LocalRabbitCluster cluster, String vhost) {
		this.cluster = cluster;
		this.vhost = vhost;
	}

	String killTierLeader() {
		requireNoneDown();
		Map<String, String> before = this.cluster.leaders(this.vhost);
		LocalRabbitNode leader = this.cluster
			.leaderOfMost(this.vhost, (queue) -> queue.startsWith(RetryTopology.TIER_QUEUE_PREFIX), (node) -> true)
			.orElseThrow(() -> new IllegalStateException("No node leads a tier queue: " + before));
		Duration election = this.cluster.kill(leader, this.vhost);
		this.down = leader;
		this.killed = leader;
		return label(leader.node()) + " SIGKILLed, it led " + led(before, leader) + "; new leaders elected within "
				+ seconds(election) + ": " + describe(this.cluster.lastSeenLeaders());
	}

	String stopAnotherLeader() {
		requireNoneDown();
		Map<String, String> before = this.cluster.leaders(this.vhost);
		LocalRabbitNode leader = this.cluster.leaderOfMost(this.vhost, (queue) -> true, (node) -> node != this.killed)
			.orElseThrow(() -> new IllegalStateException("No node but the one killed leads a queue: " + before));
		Duration stop = this.cluster.stop(leader, this.vhost);
		this.down = leader;
		return label(leader.node()) + " stopped cleanly, it led " + led(before, leader) + "; stopped and led elsewhere "
				+ "within " + seconds(stop) + ": " + describe(this.cluster.lastSeenLeaders());
	}

	String startDownNode() {
		LocalRabbitNode node = this.down;
		if (node == null) {
			throw new IllegalStateException("No node is down");
		}
		Duration back = this.cluster.startAgain(node, this.vhost);
		this.down = null;
		return label(node.node()) + " back in every quorum queue after " + seconds(back) + "; leaders " + leaders();
	}

	private void requireNoneDown() {
		if (this.down != null) {
			throw new IllegalStateException("The schedule stops a second node while " + this.down.node() + " is down: "
					+ "the quorum queues would lose their majority");
		}
	}

	private String leaders() {
		return describe(this.cluster.leaders(this.vhost));
	}

	private static String describe(Map<String, String> leaders) {
		return leaders.entrySet()
			.stream()
			.collect(Collectors.groupingBy((entry) -> label(entry.getValue()), TreeMap::new,
					Collectors.mapping(Map.Entry::getKey, Collectors.toList())))
			.toString();
	}

	private static String led(Map<String, String> leaders, LocalRabbitNode node) {
		return leaders.entrySet()
			.stream()
			.filter((entry) -> entry.getValue().equals(node.node()))
			.map(Map.Entry::getKey)
			.toList()
			.toString();
	}

	/**
	 * A short name for the report: {@code tiered-retry-harness-42-c1-2@localhost} is
	 * {@code node 2}.
	 * @param node the node's name
	 * @return the short name
	 */
	static String label(String node) {
		String name = node.contains("@") ? node.substring(0, node.indexOf('@')) : node;
		return "node " + name.substring(name.lastIndexOf('-') + 1);
	}

	private static String seconds(Duration duration) {
		return String.format("%.1f s", duration.toMillis() / 1000.0);
	}

}
