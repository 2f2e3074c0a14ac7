package io.github.tieredretry.autoconfigure;

import io.github.tieredretry.internal.actuate.RetryHealthIndicator;
import io.github.tieredretry.internal.metrics.RetryQueueDepths;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RetryHealthContributorAutoConfiguration}. No broker is touched: the
 * application points at a port nothing listens on.
 */
class RetryHealthContributorAutoConfigurationTests {

	private static final String PARKING_LOT = "health-autoconfiguration-parking-lot";

	private final ApplicationContextRunner contextRunner = OperationsApplication.operationsRunner(PARKING_LOT,
			RetryHealthContributorAutoConfiguration.class);

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

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "management.health.retry.enabled=false", "management.health.defaults.enabled=false",
			"retry.enabled=false" })
	void backsOffWhenDisabled(String property) {
		this.contextRunner.withPropertyValues(property)
			.run((context) -> assertThat(context).doesNotHaveBean(RetryHealthIndicator.class));
	}

	@Test
	void backsOffWhenSpringBootHealthIsAbsent() {
		OperationsApplication.importedWithout(PARKING_LOT, "org.springframework.boot.health")
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(RetryQueueDepths.class)
				.doesNotHaveBean(RetryHealthIndicator.class));
	}

	@Test
	void usesTheApplicationsOwnRetryHealthIndicator() {
		this.contextRunner.withBean("retryHealthIndicator", HealthIndicator.class, () -> () -> Health.up().build())
			.run((context) -> assertThat(context).doesNotHaveBean(RetryHealthIndicator.class)
				.hasBean("retryHealthIndicator"));
	}

}
