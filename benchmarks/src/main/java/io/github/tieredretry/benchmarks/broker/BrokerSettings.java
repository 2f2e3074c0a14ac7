package io.github.tieredretry.benchmarks.broker;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import com.rabbitmq.client.ConnectionFactory;

/**
 * Where the benchmark broker is.
 *
 * @param host the host
 * @param port the AMQP port
 * @param username the user
 * @param password the password
 */
public record BrokerSettings(String host, int port, String username, String password) {

	/**
	 * The broker named by {@code spring.rabbitmq.host/port/username/password} (system
	 * properties, else {@code SPRING_RABBITMQ_*} environment variables), by default
	 * {@code 127.0.0.1:5672} with guest/guest: the same defaults as the integration
	 * tests.
	 * @return the settings
	 */
	public static BrokerSettings fromEnvironment() {
		return new BrokerSettings(setting("spring.rabbitmq.host", "127.0.0.1"),
				Integer.parseInt(setting("spring.rabbitmq.port", "5672")), setting("spring.rabbitmq.username", "guest"),
				setting("spring.rabbitmq.password", "guest"));
	}

	private static String setting(String property, String defaultValue) {
		String value = System.getProperty(property);
		if (value == null) {
			value = System.getenv(property.toUpperCase(Locale.ROOT).replace('.', '_'));
		}
		return (value != null && !value.isBlank()) ? value : defaultValue;
	}

	/**
	 * Spring Boot properties that point an application at this broker.
	 * @return the properties
	 */
	public Map<String, String> springProperties() {
		Map<String, String> properties = new LinkedHashMap<>();
		properties.put("spring.rabbitmq.host", this.host);
		properties.put("spring.rabbitmq.port", String.valueOf(this.port));
		properties.put("spring.rabbitmq.username", this.username);
		properties.put("spring.rabbitmq.password", this.password);
		return properties;
	}

	/**
	 * A plain AMQP client connection factory, without automatic recovery: a benchmark
	 * that loses its connection must fail, not measure a reconnection.
	 * @return the factory
	 */
	public ConnectionFactory connectionFactory() {
		ConnectionFactory factory = new ConnectionFactory();
		factory.setHost(this.host);
		factory.setPort(this.port);
		factory.setUsername(this.username);
		factory.setPassword(this.password);
		factory.setAutomaticRecoveryEnabled(false);
		factory.setConnectionTimeout(10_000);
		return factory;
	}

	public String address() {
		return this.host + ":" + this.port;
	}

}
