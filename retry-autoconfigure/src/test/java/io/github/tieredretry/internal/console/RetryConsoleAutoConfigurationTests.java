package io.github.tieredretry.internal.console;

import io.github.tieredretry.autoconfigure.OperationsApplication;
import io.github.tieredretry.autoconfigure.RetryConsoleAutoConfiguration;
import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.web.servlet.DispatcherServlet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RetryConsoleAutoConfiguration}: the console exists only when asked
 * for, in servlet web applications with Spring MVC. No broker is touched: the application
 * points at a port nothing listens on.
 */
class RetryConsoleAutoConfigurationTests {

	private static final String PARKING_LOT = "console-autoconfiguration-parking-lot";

	private final WebApplicationContextRunner contextRunner = OperationsApplication
		.withOperations(new WebApplicationContextRunner(), PARKING_LOT, RetryConsoleAutoConfiguration.class);

	@Test
	void isOffByDefault() {
		this.contextRunner.run((context) -> assertThat(context).hasNotFailed()
			.hasSingleBean(RetryOverview.class)
			.doesNotHaveBean(RetryConsoleController.class));
	}

	@Test
	void isServedWhenEnabled() {
		this.contextRunner.withPropertyValues("retry.console.enabled=true")
			.run((context) -> assertThat(context).hasSingleBean(RetryConsoleController.class));
	}

	@Test
	void isNotServedWithoutSpringMvc() {
		this.contextRunner.withPropertyValues("retry.console.enabled=true")
			.withClassLoader(new FilteredClassLoader(DispatcherServlet.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RetryConsoleController.class));
	}

	@Test
	void isNotServedOutsideServletWebApplications() {
		OperationsApplication.operationsRunner(PARKING_LOT, RetryConsoleAutoConfiguration.class)
			.withPropertyValues("retry.console.enabled=true")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RetryConsoleController.class));
		OperationsApplication
			.withOperations(new ReactiveWebApplicationContextRunner(), PARKING_LOT, RetryConsoleAutoConfiguration.class)
			.withPropertyValues("retry.console.enabled=true")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RetryConsoleController.class));
	}

	@Test
	void isNotServedWhenRetriesAreDisabled() {
		this.contextRunner.withPropertyValues("retry.console.enabled=true", "retry.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RetryConsoleController.class));
	}

	@Test
	void usesTheApplicationsOwnController() {
		this.contextRunner.withPropertyValues("retry.console.enabled=true")
			.withBean("customConsole", RetryConsoleController.class)
			.run((context) -> assertThat(context).hasSingleBean(RetryConsoleController.class).hasBean("customConsole"));
	}

	@Test
	void anInvalidPathFailsStartupNamingTheProperty() {
		for (String path : new String[] { "retry-console", "/retry-console/", "/", "/retry console" }) {
			this.contextRunner.withPropertyValues("retry.console.enabled=true", "retry.console.path=" + path)
				.run((context) -> assertThat(context).hasFailed()
					.getFailure()
					.rootCause()
					.isInstanceOf(InvalidConfigurationPropertyValueException.class)
					.hasMessageContaining("retry.console.path"));
		}
	}

	@Test
	void anInvalidReplayRateFailsStartupNamingTheProperty() {
		this.contextRunner.withPropertyValues("retry.replay.rate=0")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("retry.replay.rate"));
		this.contextRunner.withPropertyValues("retry.replay.batch-size=0")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("retry.replay.batch-size"));
	}

}
