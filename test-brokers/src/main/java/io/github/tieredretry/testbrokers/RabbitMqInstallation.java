package io.github.tieredretry.testbrokers;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * Where the RabbitMQ that the harness starts comes from: the machine's own installation
 * ({@code rabbitmq-server} on the host), or one of the broker matrix's versions, Debian's
 * own package installed with debootstrap into a root of its own and run there with
 * {@code chroot} ({@code .ci/rabbitmq-root 4.0 4.3} prepares them).
 * <p>
 * Which one is chosen by system property {@value #VERSION_PROPERTY}: empty for the
 * machine's installation, a version such as {@code 4.3} for that line (the machine's own
 * when it is that line, else the prepared root). Nodes of a root keep their files inside
 * it, because the broker sees nothing else.
 */
public final class RabbitMqInstallation {

	/** The system property (and Maven property) that chooses the broker version. */
	public static final String VERSION_PROPERTY = "rabbitmq.version";

	/**
	 * Where {@code .ci/rabbitmq-root} puts the roots, unless {@code -Drabbitmq.roots}.
	 */
	public static final String DEFAULT_ROOTS = "/var/cache/tiered-retry/roots";

	/**
	 * Where distributions install the scripts, most specific first (the Debian wrapper in
	 * /usr/sbin last).
	 */
	private static final List<String> SCRIPT_DIRECTORIES = List.of("/usr/lib/rabbitmq/bin", "/usr/local/sbin",
			"/opt/rabbitmq/sbin", "/usr/local/opt/rabbitmq/sbin", "/opt/homebrew/opt/rabbitmq/sbin", "/usr/sbin");

	private static final String SCRIPTS_SEARCHED = "looked in -Dreliability.rabbitmq-scripts, /usr/lib/rabbitmq/bin, "
			+ "/usr/local/sbin, /opt/rabbitmq/sbin and the PATH";

	/** Debian's scripts directory, inside a root. */
	private static final String ROOT_SCRIPTS = "/usr/lib/rabbitmq/bin";

	private final Path scripts;

	private final @Nullable Path root;

	private final String version;

	private RabbitMqInstallation(Path scripts, @Nullable Path root, String version) {
		this.scripts = scripts;
		this.root = root;
		this.version = version;
	}

	/**
	 * The broker version the build asked for with {@value #VERSION_PROPERTY}.
	 * @return the version line, e.g. {@code 4.3}, if one was asked for
	 */
	public static Optional<String> requestedVersion() {
		String version = System.getProperty(VERSION_PROPERTY, "").strip();
		return version.isEmpty() ? Optional.empty() : Optional.of(version);
	}

	/**
	 * The installation the build asked for: the requested version's, else the machine's.
	 * @return the installation
	 * @throws IllegalStateException when it is not there, saying how to get it
	 */
	public static RabbitMqInstallation requested() {
		return requestedVersion().map(RabbitMqInstallation::forVersion)
			.orElseGet(() -> machine()
				.orElseThrow(() -> new IllegalStateException("No rabbitmq-server/rabbitmqctl on this machine ("
						+ SCRIPTS_SEARCHED
						+ "). Install RabbitMQ (apt-get install -y rabbitmq-server), or run a version of the broker "
						+ "matrix: .ci/rabbitmq-root 4.3, then -D" + VERSION_PROPERTY + "=4.3.")));
	}

	/**
	 * The machine's own installation: system property
	 * {@code reliability.rabbitmq-scripts}, else the usual installation directories, else
	 * the {@code PATH}.
	 * @return the installation, if RabbitMQ is installed
	 */
	public static Optional<RabbitMqInstallation> machine() {
		List<String> candidates = new ArrayList<>();
		String configured = System.getProperty("reliability.rabbitmq-scripts");
		if (configured != null && !configured.isBlank()) {
			candidates.add(configured);
		}
		candidates.addAll(SCRIPT_DIRECTORIES);
		String path = System.getenv("PATH");
		if (path != null) {
			candidates.addAll(List.of(path.split(File.pathSeparator)));
		}
		return candidates.stream()
			.map(Path::of)
			.filter((dir) -> Files.isExecutable(dir.resolve("rabbitmq-server"))
					&& Files.isExecutable(dir.resolve("rabbitmqctl")))
			.findFirst()
			.map((scripts) -> new RabbitMqInstallation(scripts, null, versionBeside(scripts, null)));
	}

	/**
	 * The installation of a version line: the machine's when it runs that line, else the
	 * root that {@code .ci/rabbitmq-root} prepared for it.
	 * @param line e.g. {@code 4.0}, {@code 4.3}, {@code 3.10}
	 * @return the installation
	 * @throws IllegalStateException when that version is not prepared, saying how
	 */
	public static RabbitMqInstallation forVersion(String line) {
		Optional<RabbitMqInstallation> machine = machine();
		if (machine.isPresent() && machine.get().isLine(line)) {
			return machine.get();
		}
		Path root = Path.of(System.getProperty("rabbitmq.roots", DEFAULT_ROOTS), "rabbitmq-" + line);
		String prepare = "Prepare it with .ci/rabbitmq-root " + line + " (as root: Debian's own rabbitmq-server "
				+ "package, installed with debootstrap into " + root + ", about a minute the first time)";
		if (!Files.isExecutable(root.resolve(ROOT_SCRIPTS.substring(1)).resolve("rabbitmq-server"))) {
			throw new IllegalStateException("RabbitMQ " + line + " was asked for (-D" + VERSION_PROPERTY + "=" + line
					+ "), but it is not installed at " + root
					+ machine.map((found) -> " and this machine's own is " + found.version()).orElse("") + ". "
					+ prepare + ".");
		}
		if (!Files.exists(root.resolve("proc/self")) || !Files.exists(root.resolve("dev/null"))) {
			throw new IllegalStateException("RabbitMQ " + line + " is installed at " + root + ", but /proc or /dev "
					+ "is not mounted in it (after a reboot, say). " + prepare + ".");
		}
		RabbitMqInstallation installation = new RabbitMqInstallation(Path.of(ROOT_SCRIPTS), root,
				versionBeside(Path.of(ROOT_SCRIPTS), root));
		if (!installation.isLine(line)) {
			throw new IllegalStateException(root + " holds RabbitMQ " + installation.version() + ", not " + line
					+ ".x. Delete it and run .ci/rabbitmq-root " + line + " again.");
		}
		return installation;
	}

	private static String versionBeside(Path scripts, @Nullable Path root) {
		Path lib = scripts.getParent();
		if (lib == null) {
			return "unknown";
		}
		lib = lib.resolve("lib");
		Path onHost = (root != null) ? root.resolve(lib.toString().substring(1)) : lib;
		try (Stream<Path> servers = Files.list(onHost)) {
			return servers.map((server) -> server.getFileName().toString())
				.filter((name) -> name.startsWith("rabbitmq_server-"))
				.map((name) -> name.substring("rabbitmq_server-".length()))
				.findFirst()
				.orElse("unknown");
		}
		catch (IOException ex) {
			return "unknown";
		}
	}

	/**
	 * The full version, e.g. {@code 4.3.6}, or {@code unknown} for an installation that
	 * does not say (not Debian's layout).
	 * @return the version
	 */
	public String version() {
		return this.version;
	}

	/**
	 * Whether this is a version of the line.
	 * @param line e.g. {@code 4.3}
	 * @return whether the version is {@code 4.3} or starts with {@code 4.3.}
	 */
	public boolean isLine(String line) {
		return this.version.equals(line) || this.version.startsWith(line + ".");
	}

	/**
	 * Whether the nodes run in a root of their own (with {@code chroot}).
	 * @return whether they do
	 */
	public boolean isRooted() {
		return this.root != null;
	}

	/**
	 * The command line that runs one of RabbitMQ's tools.
	 * @param tool e.g. {@code rabbitmq-server}, {@code rabbitmqctl}
	 * @param arguments its arguments
	 * @return the command
	 */
	List<String> command(String tool, List<String> arguments) {
		List<String> command = new ArrayList<>();
		if (this.root != null) {
			command.add("chroot");
			command.add(this.root.toString());
		}
		command.add(this.scripts.resolve(tool).toString());
		command.addAll(arguments);
		return command;
	}

	/**
	 * Where nodes keep their files: the requested directory for the machine's
	 * installation; inside the root for a rooted one (the broker sees nothing else).
	 * @param requested the directory the caller would like
	 * @return the directory, as the host sees it
	 */
	Path workDirectory(Path requested) {
		return (this.root != null) ? this.root.resolve("tmp/tiered-retry-harness") : requested;
	}

	/**
	 * A path as the broker's tools see it.
	 * @param onHost the path as the host sees it
	 * @return the same path inside the root, or unchanged
	 */
	String brokerPath(Path onHost) {
		return (this.root != null) ? "/" + this.root.relativize(onHost.toAbsolutePath()) : onHost.toString();
	}

	@Override
	public String toString() {
		return "RabbitMQ " + this.version + ((this.root != null) ? " in " + this.root : " (" + this.scripts + ")");
	}

}
