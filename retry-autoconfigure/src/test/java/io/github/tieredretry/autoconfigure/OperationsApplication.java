package io.github.tieredretry.autoconfigure;

import java.util.stream.Stream;

import io.github.tieredretry.testbrokers.Ports;

import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.AbstractApplicationContextRunner;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

/**
 * The application the tests of the operations auto-configurations (parking lot, depths,
 * metrics, health, observations, endpoint, console) start, so that each test class says
 * only which auto-configuration it is about.
 * <p>
 * No broker is touched: the application points at a port nothing listens on.
 */
public final class OperationsApplication {

	private OperationsApplication() {
	}

	/**
	 * The runner with Spring AMQP's, the starter's and the operations auto-configuration,
	 * plus the given ones, a parking lot of the given name and the tiers 1s and 5s.
	 */
	public static <R extends AbstractApplicationContextRunner<R, ?, ?>> R withOperations(R runner, String parkingLot,
			Class<?>... autoConfigurations) {
		Class<?>[] all = Stream.concat(Stream.of(RabbitAutoConfiguration.class, TieredRetryAutoConfiguration.class,
				RetryOperationsAutoConfiguration.class), Stream.of(autoConfigurations))
			.toArray(Class<?>[]::new);
		return runner.withConfiguration(AutoConfigurations.of(all)).withPropertyValues(properties(parkingLot));
	}

	/**
	 * {@link #withOperations} on a plain (not web) application.
	 */
	public static ApplicationContextRunner operationsRunner(String parkingLot, Class<?>... autoConfigurations) {
		return withOperations(new ApplicationContextRunner(), parkingLot, autoConfigurations);
	}

	/**
	 * The application with every operations auto-configuration imported as an application
	 * imports them, so that Spring Boot's class filter applies before any condition, and
	 * with the given packages hidden from its class loader.
	 */
	public static ApplicationContextRunner importedWithout(String parkingLot, String... hiddenPackages) {
		return new ApplicationContextRunner().withUserConfiguration(ImportedAsInAnApplication.class)
			.withClassLoader(new FilteredClassLoader(hiddenPackages))
			.withPropertyValues(properties(parkingLot));
	}

	private static String[] properties(String parkingLot) {
		return new String[] { "spring.rabbitmq.host=127.0.0.1", "spring.rabbitmq.port=" + Ports.unused(),
				"retry.parking-lot=" + parkingLot, "retry.tiers=1s, 5s" };
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ RabbitAutoConfiguration.class, TieredRetryAutoConfiguration.class,
			RetryOperationsAutoConfiguration.class, RetryMetricsAutoConfiguration.class,
			RetryEndpointAutoConfiguration.class, RetryHealthContributorAutoConfiguration.class })
	static class ImportedAsInAnApplication {

	}

}
