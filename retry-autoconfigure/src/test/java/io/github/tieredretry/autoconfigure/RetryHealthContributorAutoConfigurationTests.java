package io.github.tieredretry.autoconfigure;

import io.github.tieredretry.internal.actuate.RetryHealthIndicator;
import io.github.tieredretry.internal.metrics.RetryQueueDepths;
import io.github.tieredretry.testbrokers.Ports;
import org.junit.jupiter.api.Test;

import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RetryHealthContributorAutoConfiguration}. No broker is touched: the
 * application points at a port nothing listens on.
 */
class RetryHealthContributorAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RabbitAutoConfiguration.class, TieredRetryAutoConfiguration.class,
				RetryOperationsAutoConfiguration.class, RetryHealthContributorAutoConfiguration.class))
		.withPropertyValues("spring.rabbitmq.host=127.0.0.1", "spring.rabbitmq.port=" + Ports.unused(),
				"retry.parking-lot=health-autoconfiguration-parking-lot", "retry.tiers=1s, 5s");

	@Test
	void contributesTheRetryHealthIndicator() {
		this.contextRunner.run((context) -> assertThat(context).hasSingleBean(RetryHealthIndicator.class)
			.hasBean("retryHealthIndicator"));
	}

	@Test
	void isDownWithTheReasonWhileTheBrokerIsUnreachable() {
		this.contextRunner.run((context) -> {
			Health health = context.getBean(RetryHealthIndicator.class).health();
			assertThat(health.getStatus()).isEqualTo(Status.DOWN);
			assertThat(health.getDetails()).containsKey("error");
		});
	}

	@Test
	void backsOffWhenDisabled() {
		this.contextRunner.withPropertyValues("management.health.retry.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RetryHealthIndicator.class));
	}

	@Test
	void backsOffWhenHealthIndicatorsAreDisabledByDefault() {
		this.contextRunner.withPropertyValues("management.health.defaults.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RetryHealthIndicator.class));
	}

	@Test
	void backsOffWhenSpringBootHealthIsAbsent() {
		// Imported like an application does, so that Spring Boot's class filter applies
		// before any condition.
		new ApplicationContextRunner().withUserConfiguration(ImportedAsInAnApplication.class)
			.withClassLoader(new FilteredClassLoader("org.springframework.boot.health"))
			.withPropertyValues("spring.rabbitmq.host=127.0.0.1", "spring.rabbitmq.port=" + Ports.unused(),
					"retry.parking-lot=health-autoconfiguration-parking-lot")
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(RetryQueueDepths.class)
				.doesNotHaveBean(RetryHealthIndicator.class));
	}

	@Test
	void backsOffWhenRetriesAreDisabled() {
		this.contextRunner.withPropertyValues("retry.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RetryHealthIndicator.class));
	}

	@Test
	void usesTheApplicationsOwnRetryHealthIndicator() {
		this.contextRunner.withBean("retryHealthIndicator", HealthIndicator.class, () -> () -> Health.up().build())
			.run((context) -> assertThat(context).doesNotHaveBean(RetryHealthIndicator.class)
				.hasBean("retryHealthIndicator"));
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ RabbitAutoConfiguration.class, TieredRetryAutoConfiguration.class,
			RetryOperationsAutoConfiguration.class, RetryHealthContributorAutoConfiguration.class })
	static class ImportedAsInAnApplication {

	}

}
