package io.github.tieredretry.benchmarks.report;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;

/**
 * The machine a run was measured on.
 *
 * @param processors processors available to the JVM
 * @param memory total physical memory, e.g. {@code 23.4 GiB}
 * @param cpuModel the CPU model, if known
 * @param operatingSystem name and version
 * @param jdk the JVM and its version
 * @param broker the broker's product, version and address
 */
public record MachineInfo(int processors, String memory, String cpuModel, String operatingSystem, String jdk,
		String broker) {

	/**
	 * Describe this machine.
	 * @param broker the broker's product, version and address
	 * @return the description
	 */
	public static MachineInfo current(String broker) {
		OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
		String memory = "unknown";
		if (os instanceof com.sun.management.OperatingSystemMXBean sunOs) {
			memory = String.format(Locale.ROOT, "%.1f GiB", sunOs.getTotalMemorySize() / (1024.0 * 1024 * 1024));
		}
		return new MachineInfo(Runtime.getRuntime().availableProcessors(), memory, readCpuModel().orElse("unknown"),
				System.getProperty("os.name") + " " + System.getProperty("os.version") + " ("
						+ System.getProperty("os.arch") + ")",
				System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"), broker);
	}

	private static Optional<String> readCpuModel() {
		try {
			return Files.readAllLines(Path.of("/proc/cpuinfo"))
				.stream()
				.filter((line) -> line.startsWith("model name"))
				.map((line) -> line.substring(line.indexOf(':') + 1).trim())
				.findFirst();
		}
		catch (IOException | RuntimeException ex) {
			return Optional.empty();
		}
	}

	/**
	 * The load average now: the 1, 5 and 15 minute figures of {@code /proc/loadavg} (as
	 * {@code uptime} prints them), else the JVM's 1 minute figure.
	 * @return e.g. {@code 3.86, 3.97, 2.07}
	 */
	public static String loadAverage() {
		try {
			String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
			return fields[0] + ", " + fields[1] + ", " + fields[2];
		}
		catch (IOException | RuntimeException ex) {
			return String.format(Locale.ROOT, "%.2f (1 min)",
					ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
		}
	}

}
