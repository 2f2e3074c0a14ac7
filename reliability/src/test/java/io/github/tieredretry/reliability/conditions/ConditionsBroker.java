package io.github.tieredretry.reliability.conditions;

import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.tieredretry.testbrokers.HarnessBroker;
import io.github.tieredretry.testbrokers.HarnessBrokers;

/**
 * The RabbitMQ node the tests of this package share: started once per JVM, on first use,
 * and stopped when the JVM exits. Every test works in a virtual host of its own and puts
 * back any node-wide setting it changes; the node is never the shared broker on 5672.
 */
final class ConditionsBroker {

	private static final AtomicInteger vhosts = new AtomicInteger();

	private static volatile HarnessBroker broker;

	private ConditionsBroker() {
	}

	static synchronized HarnessBroker get() {
		if (broker == null) {
			Path work = Path.of(System.getProperty("reliability.work-dir", "target/fault-run"))
				.resolve("conditions")
				.toAbsolutePath();
			HarnessBroker started = HarnessBrokers.start(work);
			Runtime.getRuntime().addShutdownHook(new Thread(started::close, "stop-conditions-broker"));
			broker = started;
		}
		return broker;
	}

	/**
	 * A new virtual host on the node, for one test.
	 * @param purpose what it is for, part of its name
	 * @return its name
	 */
	static String newVirtualHost(String purpose) {
		String vhost = purpose + "-" + vhosts.incrementAndGet();
		get().createVirtualHost(vhost);
		return vhost;
	}

	/**
	 * Change a setting of the node's {@code rabbit} application at runtime.
	 * @param key the setting
	 * @param value its value, an Erlang term
	 */
	static void setRabbitEnv(String key, String value) {
		get().ctl("eval", "application:set_env(rabbit, " + key + ", " + value + ").").requireSuccess();
	}

}
