package io.github.tieredretry.testbrokers;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import com.rabbitmq.client.Address;

import static org.awaitility.Awaitility.await;

/**
 * A RabbitMQ cluster of the harness's own: {@link LocalRabbitNode local nodes} with their
 * own names ({@code tiered-retry-harness-<pid>-c<n>-1@localhost}, {@code -2}, ...), AMQP
 * and distribution ports and directories, sharing an Erlang cookie of their own, joined
 * with {@code rabbitmqctl join_cluster}. Quorum queues declared once all nodes have
 * joined get a member on every node.
 * <p>
 * Cluster-wide commands ({@code list_queues}, {@code add_vhost}) run against a running
 * node; the faults are node faults: SIGKILL ({@link #kill}), a clean stop
 * ({@link #stop}), a start ({@link #startAgain}), and {@code close_all_connections} on
 * every running node.
 */
public final class LocalRabbitCluster implements HarnessBroker {

	/** Numbers the clusters one JVM starts, so that their node names never repeat. */
	private static final AtomicInteger CLUSTERS = new AtomicInteger();

	private static final String QUORUM_CRITICAL_CHECK = "check_if_node_is_quorum_critical";

	/**
	 * The nodes' {@code advanced.config} unless
	 * {@code -Dreliability.cluster.broker-defaults=true}: a dead-letter transfer that a
	 * quorum queue's at-least-once dead-letter worker could not start is retried after 5
	 * s instead of 180 s. On RabbitMQ before 3.12.5 the worker of a queue whose leader
	 * moved in a node crash can address its first transfer to the dead node when that
	 * node also led the dead-letter target: the transfer is refused and retried only
	 * after this timeout, each time against that node, so retries stop leaving their tier
	 * until the node is back and the timeout has passed (see docs/cluster.md).
	 */
	static final String DEAD_LETTER_RETRY_AFTER_5_S = "[{rabbit, [{dead_letter_worker_publisher_confirm_timeout, "
			+ "5000}]}].\n";

	private final List<LocalRabbitNode> nodes;

	private final String advancedConfig;

	private volatile Map<String, String> lastSeenLeaders = Map.of();

	private LocalRabbitCluster(List<LocalRabbitNode> nodes, String advancedConfig) {
		this.nodes = List.copyOf(nodes);
		this.advancedConfig = advancedConfig;
	}

	/**
	 * Start the nodes side by side, join every other node to the first, and wait until
	 * all of them run; the nodes retry a refused dead-letter transfer after 5 s
	 * ({@link #DEAD_LETTER_RETRY_AFTER_5_S}) unless
	 * {@code -Dreliability.cluster.broker-defaults=true}.
	 * @param installation the RabbitMQ to run
	 * @param workDirectory where the nodes keep their files (a subdirectory per node)
	 * @param size how many nodes
	 * @return the running cluster
	 */
	public static LocalRabbitCluster start(RabbitMqInstallation installation, Path workDirectory, int size) {
		return start(installation, workDirectory, size,
				Boolean.getBoolean("reliability.cluster.broker-defaults") ? "" : DEAD_LETTER_RETRY_AFTER_5_S);
	}

	/**
	 * Start the nodes side by side, join every other node to the first, and wait until
	 * all of them run.
	 * @param installation the RabbitMQ to run
	 * @param workDirectory where the nodes keep their files (a subdirectory per node)
	 * @param size how many nodes
	 * @param advancedConfig every node's {@code advanced.config}, empty for none
	 * @return the running cluster
	 */
	static LocalRabbitCluster start(RabbitMqInstallation installation, Path workDirectory, int size,
			String advancedConfig) {
		String cookie = LocalRabbitNode.newCookie();
		// "-c<n>-": never the name of a single harness node of this JVM ("-<n>"), which
		// may still be running.
		String prefix = LocalRabbitNode.NODE_PREFIX + ProcessHandle.current().pid() + "-c" + CLUSTERS.incrementAndGet()
				+ "-";
		List<LocalRabbitNode> nodes = new ArrayList<>();
		for (int i = 1; i <= size; i++) {
			nodes.add(LocalRabbitNode.prepare(installation, workDirectory, prefix + i, cookie, advancedConfig));
		}
		LocalRabbitCluster cluster = new LocalRabbitCluster(nodes, advancedConfig);
		try {
			cluster.onEveryNode(LocalRabbitNode::launch);
			LocalRabbitNode first = nodes.get(0);
			for (LocalRabbitNode node : nodes.subList(1, size)) {
				node.ctl("stop_app").requireSuccess();
				node.ctl("join_cluster", first.node()).requireSuccess();
				node.ctl("start_app").requireSuccess();
			}
			first.ctl("await_online_nodes", String.valueOf(size), "--timeout", "120").requireSuccess();
			List<String> running = cluster.runningNodes();
			if (running.size() != size) {
				throw new IllegalStateException(
						"The harness cluster formed with " + running + " running, not all of " + cluster.nodeNames());
			}
			return cluster;
		}
		catch (RuntimeException ex) {
			cluster.close();
			throw ex;
		}
	}

	@Override
	public String description() {
		return "local " + this.nodes.size() + "-node cluster " + nodeNames() + " on " + addressList()
				+ (this.advancedConfig.isEmpty() ? ", broker defaults"
						: ", advanced.config " + this.advancedConfig.strip());
	}

	@Override
	public String host() {
		return this.nodes.get(0).host();
	}

	@Override
	public int port() {
		return this.nodes.get(0).port();
	}

	@Override
	public List<Address> addresses() {
		return this.nodes.stream().map((node) -> new Address(node.host(), node.port())).toList();
	}

	@Override
	public String username() {
		return this.nodes.get(0).username();
	}

	@Override
	public String password() {
		return this.nodes.get(0).password();
	}

	/**
	 * Run {@code rabbitmqctl} against a running node: for the cluster-wide commands
	 * (virtual hosts, permissions, queues).
	 */
	@Override
	public CommandResult ctl(String... arguments) {
		return anyRunningNode().ctl(arguments);
	}

	/**
	 * {@code rabbitmqctl close_all_connections} on every running node at once: each node
	 * closes the client connections it holds.
	 */
	@Override
	public void closeAllConnections(String vhost, String reason) {
		onEveryNode((node) -> {
			if (node.isRunning()) {
				node.closeAllConnections(vhost, reason);
			}
		});
	}

	@Override
	public void restartApplication() {
		throw new UnsupportedOperationException("A cluster's faults are node faults: kill, stop, startAgain");
	}

	@Override
	public void crashAndRestart() {
		throw new UnsupportedOperationException("A cluster's faults are node faults: kill, stop, startAgain");
	}

	@Override
	public String log() {
		StringBuilder text = new StringBuilder();
		this.nodes.forEach((node) -> text.append(node.log()));
		return text.toString();
	}

	public List<LocalRabbitNode> nodes() {
		return this.nodes;
	}

	/**
	 * The leader of each quorum queue of a virtual host, as the cluster reports it.
	 * @param vhost the virtual host
	 * @return queue name to the leader's node name
	 */
	public Map<String, String> leaders(String vhost) {
		Map<String, String> leaders = new LinkedHashMap<>();
		for (String[] columns : listQueues(vhost, "name", "type", "leader")) {
			if (columns.length == 3 && columns[1].equals("quorum")) {
				leaders.put(columns[0], columns[2]);
			}
		}
		return leaders;
	}

	/**
	 * The members of each quorum queue of a virtual host (the nodes holding a replica);
	 * other queues are not listed.
	 * @param vhost the virtual host
	 * @return queue name to its members' node names
	 */
	public Map<String, List<String>> members(String vhost) {
		return nodeLists(vhost, "members");
	}

	/**
	 * The members of each quorum queue that are online.
	 * @param vhost the virtual host
	 * @return queue name to its online members' node names
	 */
	public Map<String, List<String>> onlineMembers(String vhost) {
		return nodeLists(vhost, "online");
	}

	/**
	 * The running node that leads most of the given queues.
	 * @param vhost the virtual host
	 * @param queues which queues count
	 * @param candidates which nodes may be chosen
	 * @return the node, if any of them leads one of the queues
	 */
	public Optional<LocalRabbitNode> leaderOfMost(String vhost, Predicate<String> queues,
			Predicate<LocalRabbitNode> candidates) {
		Map<String, Long> led = leaders(vhost).entrySet()
			.stream()
			.filter((entry) -> queues.test(entry.getKey()))
			.collect(Collectors.groupingBy(Map.Entry::getValue, Collectors.counting()));
		return this.nodes.stream()
			.filter(LocalRabbitNode::isRunning)
			.filter(candidates)
			.filter((node) -> led.containsKey(node.node()))
			.max(Comparator.comparing((LocalRabbitNode node) -> led.get(node.node())));
	}

	/**
	 * Kill a node (SIGKILL) and wait until every quorum queue of the virtual host that it
	 * led has elected a leader on another node.
	 * @param node the node
	 * @param vhost the virtual host
	 * @return how long the election took, from the kill
	 */
	public Duration kill(LocalRabbitNode node, String vhost) {
		long start = System.nanoTime();
		node.kill();
		awaitNoLeaderOn(node, vhost);
		return Duration.ofNanos(System.nanoTime() - start);
	}

	/**
	 * The leaders as last seen by {@link #kill} or {@link #stop}, once none was on the
	 * node any more.
	 * @return queue name to the leader's node name
	 */
	public Map<String, String> lastSeenLeaders() {
		return this.lastSeenLeaders;
	}

	/**
	 * Stop a node cleanly ({@code rabbitmqctl stop}), once no quorum queue would lose its
	 * majority without it ({@code rabbitmq-queues check_if_node_is_quorum_critical}: a
	 * node that came back from a crash may still be catching up), and wait until the
	 * queues it led have other leaders.
	 * @param node the node
	 * @param vhost the virtual host
	 * @return how long the stop took, from the moment the node was no longer critical
	 */
	public Duration stop(LocalRabbitNode node, String vhost) {
		await().atMost(Duration.ofMinutes(2))
			.pollInterval(Duration.ofMillis(500))
			.until(() -> node.tool("rabbitmq-queues", QUORUM_CRITICAL_CHECK).exitCode() == 0);
		long start = System.nanoTime();
		node.stop();
		awaitNoLeaderOn(node, vhost);
		return Duration.ofNanos(System.nanoTime() - start);
	}

	/**
	 * Start a killed or stopped node again, and wait until it is back in every quorum
	 * queue of the virtual host.
	 * @param node the node
	 * @param vhost the virtual host
	 * @return how long it took
	 */
	public Duration startAgain(LocalRabbitNode node, String vhost) {
		long start = System.nanoTime();
		node.launch();
		await().atMost(Duration.ofMinutes(2))
			.pollInterval(Duration.ofMillis(250))
			.until(() -> onlineMembers(vhost).values().stream().allMatch((online) -> online.contains(node.node())));
		return Duration.ofNanos(System.nanoTime() - start);
	}

	/**
	 * The nodes that the cluster reports running.
	 * @return their names
	 */
	public List<String> runningNodes() {
		String output = ctl("eval", "rabbit_nodes:all_running().").requireSuccess().output();
		return Arrays.stream(output.replaceAll("[\\[\\]'\\s]", "").split(","))
			.filter((name) -> !name.isEmpty())
			.sorted()
			.toList();
	}

	@Override
	public void close() {
		onEveryNode(LocalRabbitNode::close);
	}

	private void awaitNoLeaderOn(LocalRabbitNode node, String vhost) {
		await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(100)).until(() -> {
			this.lastSeenLeaders = leaders(vhost);
			return !this.lastSeenLeaders.containsValue(node.node());
		});
	}

	private LocalRabbitNode anyRunningNode() {
		return this.nodes.stream()
			.filter(LocalRabbitNode::isRunning)
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("No node of the harness cluster runs"));
	}

	private List<String> nodeNames() {
		return this.nodes.stream().map(LocalRabbitNode::node).toList();
	}

	private Map<String, List<String>> nodeLists(String vhost, String column) {
		Map<String, List<String>> lists = new LinkedHashMap<>();
		for (String line : ctl("list_queues", "-p", vhost, "name", "type", column, "--no-table-headers", "--quiet")
			.requireSuccess()
			.output()
			.split("\n")) {
			String[] columns = line.strip().split("\\s+", 3);
			if (columns.length == 3 && columns[1].equals("quorum")) {
				lists.put(columns[0],
						Arrays.stream(columns[2].replaceAll("[\\[\\]]", "").split(","))
							.map(String::strip)
							.filter((name) -> !name.isEmpty())
							.toList());
			}
		}
		return lists;
	}

	private List<String[]> listQueues(String vhost, String... columns) {
		List<String> arguments = new ArrayList<>(List.of("list_queues", "-p", vhost));
		arguments.addAll(List.of(columns));
		arguments.addAll(List.of("--no-table-headers", "--quiet"));
		return Arrays.stream(ctl(arguments.toArray(String[]::new)).requireSuccess().output().split("\n"))
			.map((line) -> line.strip().split("\\s+"))
			.toList();
	}

	// Nodes start and stop side by side, each on a thread of its own (the common pool may
	// have one).
	private void onEveryNode(Consumer<LocalRabbitNode> action) {
		ExecutorService executor = Executors.newFixedThreadPool(this.nodes.size());
		try {
			CompletableFuture
				.allOf(this.nodes.stream()
					.map((node) -> CompletableFuture.runAsync(() -> action.accept(node), executor))
					.toArray(CompletableFuture[]::new))
				.join();
		}
		catch (CompletionException ex) {
			throw (ex.getCause() instanceof RuntimeException cause) ? cause : ex;
		}
		finally {
			executor.shutdown();
		}
	}

}
