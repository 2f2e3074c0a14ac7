package io.github.tieredretry.reliability.conditions;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import com.rabbitmq.client.Connection;
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
	 * The properties that point an application at a virtual host of a node.
	 * @param node the node (this package's, or a test's own)
	 * @param vhost the virtual host
	 * @return Spring Boot's connection properties, no web server, no banner
	 */
	static Map<String, Object> applicationProperties(HarnessBroker node, String vhost) {
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("spring.rabbitmq.host", node.host());
		properties.put("spring.rabbitmq.port", node.port());
		properties.put("spring.rabbitmq.username", node.username());
		properties.put("spring.rabbitmq.password", node.password());
		properties.put("spring.rabbitmq.virtual-host", vhost);
		properties.put("spring.main.web-application-type", "none");
		properties.put("spring.main.banner-mode", "off");
		return properties;
	}

	/**
	 * Whether the broker at the other end has delayed retry (RabbitMQ 4.3 or later).
	 * @param connection a connection to it
	 * @return whether it has
	 */
	static boolean hasDelayedRetry(Connection connection) {
		String[] version = String.valueOf(connection.getServerProperties().get("version")).split("\\.");
		int major = Integer.parseInt(version[0]);
		return major > 4 || (major == 4 && Integer.parseInt(version[1]) >= 3);
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
