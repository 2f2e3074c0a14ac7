package io.github.tieredretry.reliability.faultrun;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.github.tieredretry.testbrokers.Ports;

/**
 * The instances of the consuming application that run side by side on the same retryable
 * listener, each in its own JVM. One instance is named by no letter (its files are
 * {@code journal-NN.log}); several are named {@code a}, {@code b}, ... When they serve
 * HTTP, each gets a port of its own that it keeps across restarts, so that the harness
 * can call its actuator endpoints.
 */
final class ConsumerInstances implements AutoCloseable {

	private final List<ConsumerProcess> instances = new ArrayList<>();

	private final List<Integer> httpPorts = new ArrayList<>();

	private int kills;

	/**
	 * Prepare the instances.
	 * @param runDirectory where journals and logs go
	 * @param count how many instances
	 * @param http whether each serves HTTP (actuator) on a port of its own
	 * @param applicationArguments Spring Boot arguments shared by all instances
	 */
	ConsumerInstances(Path runDirectory, int count, boolean http, List<String> applicationArguments) {
		for (int i = 0; i < count; i++) {
			String instance = (count == 1) ? "" : String.valueOf((char) ('a' + i));
			List<String> arguments = new ArrayList<>(applicationArguments);
			if (http) {
				int port = Ports.unused();
				this.httpPorts.add(port);
				arguments.add("--spring.main.web-application-type=servlet");
				arguments.add("--server.port=" + port);
				arguments.add("--server.address=127.0.0.1");
			}
			this.instances.add(new ConsumerProcess(runDirectory, instance, arguments));
		}
	}

	void startAll() {
		this.instances.forEach(ConsumerProcess::start);
	}

	/**
	 * SIGKILL one instance and start it again: the first instance at the first kill, the
	 * next one at the next kill, and so on.
	 * @return the instance killed, e.g. {@code a}, or empty when there is only one
	 */
	String killOneAndRestart() {
		ConsumerProcess victim = this.instances.get(this.kills++ % this.instances.size());
		victim.kill();
		victim.start();
		return victim.instance();
	}

	boolean allAlive() {
		return this.instances.stream().allMatch(ConsumerProcess::isAlive);
	}

	/**
	 * Why an instance is not running, for failure messages.
	 * @return the exits of the instances that do not run
	 */
	String describeExits() {
		return String.join("\n",
				this.instances.stream()
					.filter((instance) -> !instance.isAlive())
					.map(ConsumerProcess::describeExit)
					.toList());
	}

	/** SIGTERM to every instance at once; each finishes its current messages. */
	void stopAll() {
		ExecutorService executor = Executors.newFixedThreadPool(this.instances.size());
		try {
			CompletableFuture
				.allOf(this.instances.stream()
					.map((instance) -> CompletableFuture.runAsync(instance::stop, executor))
					.toArray(CompletableFuture[]::new))
				.join();
		}
		finally {
			executor.shutdown();
		}
	}

	/**
	 * The instances' HTTP ports, in instance order.
	 * @return the ports, empty when they serve no HTTP
	 */
	List<Integer> httpPorts() {
		return List.copyOf(this.httpPorts);
	}

	List<String> names() {
		return this.instances.stream().map(ConsumerProcess::instance).toList();
	}

	@Override
	public void close() {
		this.instances.forEach(ConsumerProcess::close);
	}

}
