package io.github.tieredretry.testsupport;

import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Starts the small applications that tests build for themselves (through proxies, on a
 * harness node of their own). Their properties are passed as command-line arguments,
 * which win over every other source: a {@code spring.rabbitmq.port} system property
 * (which {@code -Dspring.rabbitmq.port=...} and the broker matrix set for the whole test
 * JVM) must not send an application that a test points at a proxy or at a node of its own
 * to another broker. {@code SpringApplicationBuilder.properties} would not do: default
 * properties lose to system properties.
 */
public final class TestApplications {

	private TestApplications() {
	}

	/**
	 * The properties that connect an application to the test broker, in a new map to add
	 * the test's own to.
	 * @return {@code spring.rabbitmq.*} of the {@link TestBroker}
	 */
	public static Map<String, Object> brokerProperties() {
		Map<String, Object> properties = new LinkedHashMap<>();
		for (String pair : TestBroker.get().springProperties()) {
			int equals = pair.indexOf('=');
			properties.put(pair.substring(0, equals), pair.substring(equals + 1));
		}
		return properties;
	}

	/**
	 * Start an application.
	 * @param application its configuration class
	 * @param properties its properties
	 * @return the running application
	 */
	public static ConfigurableApplicationContext run(Class<?> application, Map<String, ?> properties) {
		String[] arguments = properties.entrySet()
			.stream()
			.map((property) -> "--" + property.getKey() + "=" + property.getValue())
			.toArray(String[]::new);
		return new SpringApplicationBuilder(application).run(arguments);
	}

}
