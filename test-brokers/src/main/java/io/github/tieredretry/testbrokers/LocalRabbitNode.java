package io.github.tieredretry.testbrokers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * A RabbitMQ node of the harness's own, started from a {@link RabbitMqInstallation} (the
 * machine's {@code rabbitmq-server}, or a version of the broker matrix in a root of its
 * own) as the current user, with everything it writes under the build directory (inside
 * the root for a rooted installation):
 * <ul>
 * <li>its own node name ({@code tiered-retry-harness-<pid>-<n>@localhost}), AMQP port and
 * distribution port (both free ports picked at start), so it can run next to a
 * developer's broker on 5672, and next to another build's harness node;</li>
 * <li>its own configuration, plugins, Mnesia, log and pid files, Erlang cookie
 * ({@code HOME}) and an empty {@code rabbitmq-env.conf}, so that nothing of the system
 * broker's configuration applies.</li>
 * </ul>
 * Every {@code rabbitmqctl} call names this node explicitly: the faults can never reach
 * another broker.
 * <p>
 * The same class makes the members of a {@link LocalRabbitCluster}: nodes prepared with
 * {@link #prepare} share one cookie, and can be killed, stopped and started again one by
 * one.
 */
public final class LocalRabbitNode implements HarnessBroker {

	/**
	 * Every harness node's name starts with this; fault commands refuse any other node.
	 */
	static final String NODE_PREFIX = "tiered-retry-harness-";

	private static final String USER = "guest";

	private static final AtomicInteger STARTED = new AtomicInteger();

	private static final long COMMAND_TIMEOUT_SECONDS = 120;

	private final RabbitMqInstallation installation;

	private final Path base;

	private final String node;

	private final int amqpPort;

	private final Map<String, String> environment;

	private final Thread killOnExit;

	private volatile boolean running;

	private LocalRabbitNode(RabbitMqInstallation installation, Path base, String node, int amqpPort,
			Map<String, String> environment) {
		this.installation = installation;
		this.base = base;
		this.node = node;
		this.amqpPort = amqpPort;
		this.environment = environment;
		// A detached node outlives the JVM that started it: a harness killed mid-run must
		// not leave it behind.
		this.killOnExit = new Thread(this::killNodeProcess, "kill-" + node);
		Runtime.getRuntime().addShutdownHook(this.killOnExit);
	}

	/**
	 * Start a node and wait until it accepts connections.
	 * @param installation the RabbitMQ to run
	 * @param workDirectory where the node keeps its files (a subdirectory per node),
	 * unless the installation keeps them in its root
	 * @return the running node
	 */
	public static LocalRabbitNode start(RabbitMqInstallation installation, Path workDirectory) {
		// Unique per start: one JVM may run several harness nodes (the conditions tests'
		// and the fault run's).
		LocalRabbitNode rabbit = prepare(installation, workDirectory,
				NODE_PREFIX + ProcessHandle.current().pid() + "-" + STARTED.incrementAndGet(), newCookie());
		rabbit.launch();
		return rabbit;
	}

	/**
	 * Prepare a node's files and environment without starting it.
	 * @param installation the RabbitMQ to run
	 * @param workDirectory where the node keeps its files (a subdirectory per node),
	 * unless the installation keeps them in its root
	 * @param shortName the node name before {@code @localhost}; must start with
	 * {@value #NODE_PREFIX}
	 * @param cookie the Erlang cookie: nodes of one cluster share theirs
	 * @return the node, not running yet
	 */
	static LocalRabbitNode prepare(RabbitMqInstallation installation, Path workDirectory, String shortName,
			String cookie) {
		return prepare(installation, workDirectory, shortName, cookie, "");
	}

	/**
	 * Prepare a node's files and environment without starting it.
	 * @param installation the RabbitMQ to run
	 * @param workDirectory where the node keeps its files (a subdirectory per node),
	 * unless the installation keeps them in its root
	 * @param shortName the node name before {@code @localhost}; must start with
	 * {@value #NODE_PREFIX}
	 * @param cookie the Erlang cookie: nodes of one cluster share theirs
	 * @param advancedConfig the content of the node's {@code advanced.config}, empty for
	 * none
	 * @return the node, not running yet
	 */
	static LocalRabbitNode prepare(RabbitMqInstallation installation, Path workDirectory, String shortName,
			String cookie, String advancedConfig) {
		if (!shortName.startsWith(NODE_PREFIX)) {
			throw new IllegalArgumentException("A harness node's name starts with " + NODE_PREFIX + ": " + shortName);
		}
		String node = shortName + "@localhost";
		Path base = installation.workDirectory(workDirectory).resolve(shortName).toAbsolutePath();
		int amqpPort = Ports.unused();
		int distributionPort = Ports.unused();
		while (distributionPort == amqpPort) {
			distributionPort = Ports.unused();
		}
		Map<String, String> environment;
		try {
			deleteRecursively(base);
			Path home = Files.createDirectories(base.resolve("home"));
			Files.createDirectories(base.resolve("mnesia"));
			Files.createDirectories(base.resolve("log"));
			Files.writeString(base.resolve("rabbitmq.conf"), "listeners.tcp.1 = 127.0.0.1:" + amqpPort + "\n");
			Files.writeString(base.resolve("enabled_plugins"), "[].\n");
			Files.writeString(base.resolve("rabbitmq-env.conf"), "");
			if (!advancedConfig.isEmpty()) {
				Files.writeString(base.resolve("advanced.config"), advancedConfig);
			}
			writeCookie(home.resolve(".erlang.cookie"), cookie);
			environment = new LinkedHashMap<>();
			environment.put("HOME", installation.brokerPath(home));
			environment.put("RABBITMQ_NODENAME", node);
			environment.put("RABBITMQ_NODE_IP_ADDRESS", "127.0.0.1");
			environment.put("RABBITMQ_NODE_PORT", String.valueOf(amqpPort));
			environment.put("RABBITMQ_DIST_PORT", String.valueOf(distributionPort));
			environment.put("RABBITMQ_CONF_ENV_FILE", installation.brokerPath(base.resolve("rabbitmq-env.conf")));
			environment.put("RABBITMQ_CONFIG_FILE", installation.brokerPath(base.resolve("rabbitmq.conf")));
			environment.put("RABBITMQ_ADVANCED_CONFIG_FILE", installation.brokerPath(base.resolve("advanced.config")));
			environment.put("RABBITMQ_ENABLED_PLUGINS_FILE", installation.brokerPath(base.resolve("enabled_plugins")));
			environment.put("RABBITMQ_MNESIA_BASE", installation.brokerPath(base.resolve("mnesia")));
			environment.put("RABBITMQ_LOG_BASE", installation.brokerPath(base.resolve("log")));
			environment.put("RABBITMQ_PID_FILE", installation.brokerPath(base.resolve("node.pid")));
			environment.put("RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS", "-kernel inet_dist_use_interface {127,0,0,1}");
			environment.put("ERL_EPMD_ADDRESS", "127.0.0.1");
			environment.put("ERL_CRASH_DUMP", installation.brokerPath(base.resolve("erl_crash.dump")));
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot prepare the harness node's directory " + base, ex);
		}
		return new LocalRabbitNode(installation, base, node, amqpPort, environment);
	}

	/**
	 * Start the node's Erlang VM ({@code rabbitmq-server -detached}) and wait until
	 * RabbitMQ runs in it; a member of a cluster rejoins its cluster.
	 * @throws IllegalStateException when it does not start, with the end of its log
	 */
	void launch() {
		Path pidFile = this.base.resolve("node.pid");
		try {
			// A stale pid file (left by a SIGKILL) would make "rabbitmqctl wait" watch a
			// dead process.
			Files.deleteIfExists(pidFile);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		run(this.installation.command("rabbitmq-server", List.of("-detached")));
		CommandResult started = ctl("wait", this.installation.brokerPath(pidFile), "--timeout", "120");
		if (started.exitCode() != 0) {
			String log = logTail();
			killNodeProcess();
			throw new IllegalStateException("The harness's RabbitMQ node " + this.node + " did not start ("
					+ started.output().strip() + ").\nNode log (" + this.base.resolve("log") + "):\n" + log);
		}
		this.running = true;
	}

	/**
	 * The node's name, e.g. {@code tiered-retry-harness-42@localhost}.
	 * @return the name
	 */
	public String node() {
		return this.node;
	}

	/**
	 * Whether the node was started and has not been killed or stopped since.
	 * @return whether it runs
	 */
	public boolean isRunning() {
		return this.running;
	}

	/**
	 * Kill the node's VM with SIGKILL: nothing flushed, nothing handed over, like a
	 * crashed machine.
	 */
	public void kill() {
		this.running = false;
		killNodeProcess();
	}

	/**
	 * Stop the node cleanly ({@code rabbitmqctl stop}): it hands its quorum queue
	 * leaderships over and closes its client connections before its VM exits.
	 */
	public void stop() {
		this.running = false;
		ctl("stop", this.installation.brokerPath(this.base.resolve("node.pid"))).requireSuccess();
	}

	@Override
	public String description() {
		return "local node " + this.node + " on 127.0.0.1:" + this.amqpPort + " (" + this.installation + ")";
	}

	@Override
	public String host() {
		return "127.0.0.1";
	}

	@Override
	public int port() {
		return this.amqpPort;
	}

	@Override
	public String username() {
		return USER;
	}

	@Override
	public String password() {
		return USER;
	}

	@Override
	public void crashAndRestart() {
		kill();
		launch();
	}

	@Override
	public void close() {
		try {
			if (this.running) {
				this.running = false;
				ctl("stop", this.installation.brokerPath(this.base.resolve("node.pid")));
			}
		}
		finally {
			killNodeProcess();
			if (this.installation.isRooted()) {
				// Nothing cleans a root the way "mvn clean" cleans target/.
				try {
					deleteRecursively(this.base);
				}
				catch (IOException ex) {
					// Left for the next run, which starts from an empty directory anyway.
				}
			}
			try {
				Runtime.getRuntime().removeShutdownHook(this.killOnExit);
			}
			catch (IllegalStateException ex) {
				// Already shutting down: the hook runs anyway.
			}
		}
	}

	@Override
	public CommandResult ctl(String... arguments) {
		return tool("rabbitmqctl", arguments);
	}

	/**
	 * Run one of RabbitMQ's command line tools against this node, and this node only.
	 * @param tool {@code rabbitmqctl}, {@code rabbitmq-queues} or
	 * {@code rabbitmq-diagnostics}
	 * @param arguments the command and its arguments
	 * @return the result
	 */
	CommandResult tool(String tool, String... arguments) {
		if (!this.node.startsWith(NODE_PREFIX)) {
			throw new IllegalStateException("Refusing to run " + tool + " against " + this.node);
		}
		List<String> toolArguments = new ArrayList<>(List.of("-n", this.node));
		toolArguments.addAll(List.of(arguments));
		return run(this.installation.command(tool, toolArguments));
	}

	private CommandResult run(List<String> command) {
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
		builder.environment().putAll(this.environment);
		builder.directory(this.base.toFile());
		String description = String.join(" ", command);
		try {
			Path output = Files.createTempFile(this.base, "command-", ".out");
			builder.redirectOutput(output.toFile());
			Process process = builder.start();
			if (!process.waitFor(COMMAND_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
				process.destroyForcibly();
				return new CommandResult(description, -1, "timed out after " + COMMAND_TIMEOUT_SECONDS + " s");
			}
			String text = Files.readString(output, StandardCharsets.UTF_8);
			Files.deleteIfExists(output);
			return new CommandResult(description, process.exitValue(), text);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot run '" + description + "'", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while running '" + description + "'", ex);
		}
	}

	private void killNodeProcess() {
		Path pidFile = this.base.resolve("node.pid");
		try {
			if (Files.exists(pidFile)) {
				long pid = Long.parseLong(Files.readString(pidFile).strip());
				ProcessHandle.of(pid)
					.filter((process) -> process.info()
						.command()
						.map((command) -> command.contains("beam"))
						.orElse(true))
					.ifPresent((process) -> {
						process.destroyForcibly();
						process.onExit().orTimeout(30, TimeUnit.SECONDS).join();
					});
			}
		}
		catch (IOException | NumberFormatException | CompletionException ex) {
			// Nothing left to kill.
		}
	}

	@Override
	public String log() {
		try (Stream<Path> logs = Files.list(this.base.resolve("log"))) {
			StringBuilder text = new StringBuilder();
			for (Path log : logs.filter((file) -> file.toString().endsWith(".log")).sorted().toList()) {
				text.append(Files.readString(log, StandardCharsets.UTF_8));
			}
			return text.toString();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read the log of " + this.node, ex);
		}
	}

	private String logTail() {
		try (Stream<Path> logs = Files.list(this.base.resolve("log"))) {
			StringBuilder tail = new StringBuilder();
			for (Path log : logs.filter((file) -> file.toString().endsWith(".log")).toList()) {
				List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
				tail.append("--- ").append(log.getFileName()).append('\n');
				lines.subList(Math.max(0, lines.size() - 40), lines.size())
					.forEach((line) -> tail.append(line).append('\n'));
			}
			return tail.toString();
		}
		catch (IOException ex) {
			return "(no log: " + ex.getMessage() + ")";
		}
	}

	/**
	 * A new Erlang cookie: the nodes and the command line tools that share it can talk to
	 * each other, and nothing else can (not the system broker, whose cookie is another).
	 * @return the cookie
	 */
	static String newCookie() {
		SecureRandom random = new SecureRandom();
		StringBuilder value = new StringBuilder();
		for (int i = 0; i < 32; i++) {
			value.append((char) ('A' + random.nextInt(26)));
		}
		return value.toString();
	}

	private static void writeCookie(Path cookie, String value) throws IOException {
		// Written before the node starts, so that the node and the CLI never race to
		// create it.
		Files.writeString(cookie, value);
		Files.setPosixFilePermissions(cookie, Set.of(PosixFilePermission.OWNER_READ));
	}

	private static void deleteRecursively(Path directory) throws IOException {
		if (!Files.exists(directory)) {
			return;
		}
		try (Stream<Path> paths = Files.walk(directory)) {
			for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
				if (!Files.isWritable(path)) {
					path.toFile().setWritable(true);
				}
				Files.delete(path);
			}
		}
	}

}
