package io.github.tieredretry.reliability.faultrun;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.tieredretry.reliability.consumer.FaultRunConsumerApplication;
import org.jspecify.annotations.Nullable;

/**
 * One instance of the consuming application, in a JVM of its own started with this JVM's
 * classpath, so that it can be killed with SIGKILL ({@link Process#destroyForcibly()})
 * like a crashed or OOM-killed pod. Each start is a new incarnation with its own journal
 * and log file in the run's directory ({@code journal-NN.log}, or
 * {@code journal-<instance>-NN.log} when several instances run side by side).
 */
final class ConsumerProcess implements AutoCloseable {

	private final Path runDirectory;

	private final String instance;

	private final List<String> applicationArguments;

	private @Nullable Process process;

	private int incarnations;

	/**
	 * Prepare a consumer instance.
	 * @param runDirectory where journals and logs go
	 * @param instance the instance's name in its file names, or empty when it is the only
	 * one
	 * @param applicationArguments Spring Boot arguments ({@code --key=value}), without
	 * the journal
	 */
	ConsumerProcess(Path runDirectory, String instance, List<String> applicationArguments) {
		this.runDirectory = runDirectory;
		this.instance = instance;
		this.applicationArguments = List.copyOf(applicationArguments);
	}

	String instance() {
		return this.instance;
	}

	/** Start a new incarnation. */
	synchronized void start() {
		this.incarnations++;
		String name = fileSuffix(this.incarnations);
		List<String> command = new ArrayList<>();
		command.add(ProcessHandle.current()
			.info()
			.command()
			.orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
		command.add("-Xmx384m");
		command.add("-XX:+UseSerialGC");
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		command.add(FaultRunConsumerApplication.class.getName());
		command.addAll(this.applicationArguments);
		command.add("--fault-run.journal=" + this.runDirectory.resolve("journal-" + name + ".log"));
		Path log = this.runDirectory.resolve("consumer-" + name + ".log");
		try {
			this.process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot start the consumer process", ex);
		}
	}

	/**
	 * SIGKILL: no shutdown hook, no graceful container stop, unacked messages go back to
	 * the broker.
	 */
	synchronized void kill() {
		Process current = requireProcess();
		current.destroyForcibly();
		awaitExit(current, 30);
	}

	/**
	 * SIGTERM: Spring's graceful shutdown lets the listener containers finish their
	 * current messages.
	 */
	synchronized void stop() {
		Process current = this.process;
		if (current != null && current.isAlive()) {
			current.destroy();
			if (!awaitExit(current, 60)) {
				current.destroyForcibly();
				awaitExit(current, 30);
			}
		}
	}

	synchronized boolean isAlive() {
		return this.process != null && this.process.isAlive();
	}

	synchronized int incarnations() {
		return this.incarnations;
	}

	/**
	 * Why the consumer is not running, for failure messages: its exit code and the end of
	 * its log.
	 * @return a description
	 */
	synchronized String describeExit() {
		Process current = this.process;
		String exit = "never started";
		if (current != null) {
			exit = current.isAlive() ? "still running" : "exited with code " + current.exitValue();
		}
		Path log = this.runDirectory.resolve("consumer-" + fileSuffix(this.incarnations) + ".log");
		try {
			List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
			return "consumer " + fileSuffix(this.incarnations) + " " + exit + "; last lines of " + log + ":\n"
					+ String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
		}
		catch (IOException ex) {
			return "consumer " + fileSuffix(this.incarnations) + " " + exit + " (no log: " + ex.getMessage() + ")";
		}
	}

	private String fileSuffix(int incarnation) {
		return (this.instance.isEmpty() ? "" : this.instance + "-") + String.format("%02d", incarnation);
	}

	private Process requireProcess() {
		Process current = this.process;
		if (current == null) {
			throw new IllegalStateException("The consumer was never started");
		}
		return current;
	}

	private static boolean awaitExit(Process process, long seconds) {
		try {
			return process.waitFor(seconds, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	@Override
	public synchronized void close() {
		Process current = this.process;
		if (current != null && current.isAlive()) {
			current.destroyForcibly();
			awaitExit(current, 30);
		}
	}

}
