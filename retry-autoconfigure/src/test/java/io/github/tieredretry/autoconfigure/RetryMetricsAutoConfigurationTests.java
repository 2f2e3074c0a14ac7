package io.github.tieredretry.autoconfigure;

import io.github.tieredretry.internal.forwarding.PublisherBlockedState;
import io.github.tieredretry.internal.metrics.PublisherBlockedMetrics;
import io.github.tieredretry.internal.metrics.RetryEventMetrics;
import io.github.tieredretry.internal.metrics.RetryQueueDepthMetrics;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RetryMetricsAutoConfiguration}. No broker is touched: the application
 * points at a port nothing listens on.
 */
class RetryMetricsAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = OperationsApplication
		.operationsRunner("metrics-autoconfiguration-parking-lot", RetryMetricsAutoConfiguration.class);

	/**
	 * With Spring Boot's metrics auto-configuration, so with its meter registry.
	 */
	private final ApplicationContextRunner withSpringBootsMetrics = this.contextRunner
		.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
				SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class));

	@Test
	void recordsMetricsWhenAMeterRegistryExists() {
		this.contextRunner.withBean(SimpleMeterRegistry.class)
			.run((context) -> assertThat(context).hasSingleBean(RetryEventMetrics.class)
				.hasSingleBean(RetryQueueDepthMetrics.class));
	}

	@Test
	void depthGaugesAreRegisteredWithSpringBootsMetricsAndAreNaNWhileTheBrokerIsUnreachable() {
		this.withSpringBootsMetrics.run((context) -> {
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			assertThat(registry.get(RetryQueueDepthMetrics.DEPTH).gauges())
				.extracting((gauge) -> gauge.getId().getTag("queue"))
				.containsExactlyInAnyOrder("retry.delay.1s", "retry.delay.5s", "metrics-autoconfiguration-parking-lot");
			Gauge parkingLot = registry.get(RetryQueueDepthMetrics.DEPTH)
				.tag("queue", "metrics-autoconfiguration-parking-lot")
				.gauge();
			assertThat(parkingLot.value()).isNaN();
			assertThat(parkingLot.getId().getDescription()).isNotBlank();
		});
	}

	@Test
	void publisherBlockedGaugeAndBlockCounterFollowTheBrokersBlocks() {
		this.withSpringBootsMetrics.run((context) -> {
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			PublisherBlockedState state = context.getBean(PublisherBlockedState.class);
			assertThat(registry.get(PublisherBlockedMetrics.BLOCKED).gauge().value()).isZero();
			state.handleBlocked("low on disk");
			assertThat(registry.get(PublisherBlockedMetrics.BLOCKED).gauge().value()).isOne();
			state.handleUnblocked();
			assertThat(registry.get(PublisherBlockedMetrics.BLOCKED).gauge().value()).isZero();
			assertThat(registry.get(PublisherBlockedMetrics.BLOCKS).functionCounter().count()).isOne();
		});
	}

	@Test
	void backsOffWithoutAMeterRegistry() {
		this.contextRunner.run((context) -> assertThat(context).doesNotHaveBean(RetryEventMetrics.class)
			.doesNotHaveBean(RetryQueueDepthMetrics.class));
	}

	@Test
	void backsOffWhenMicrometerIsAbsent() {
		this.contextRunner.withClassLoader(new FilteredClassLoader("io.micrometer"))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(RetryEventMetrics.class)
				.doesNotHaveBean(RetryQueueDepthMetrics.class));
	}

	@ParameterizedTest(name = "{0}")
	@ValueSource(strings = { "retry.metrics.enabled=false", "retry.enabled=false" })
	void backsOffWhenDisabled(String property) {
		this.contextRunner.withBean(SimpleMeterRegistry.class)
			.withPropertyValues(property)
			.run((context) -> assertThat(context).doesNotHaveBean(RetryEventMetrics.class)
				.doesNotHaveBean(RetryQueueDepthMetrics.class));
	}

	@Test
	void usesTheApplicationsOwnEventMetrics() {
		this.contextRunner.withBean(SimpleMeterRegistry.class)
			.withBean("customRetryEventMetrics", RetryEventMetrics.class,
					() -> new RetryEventMetrics(new SimpleMeterRegistry()))
			.run((context) -> assertThat(context).hasSingleBean(RetryEventMetrics.class)
				.hasBean("customRetryEventMetrics"));
	}

}
