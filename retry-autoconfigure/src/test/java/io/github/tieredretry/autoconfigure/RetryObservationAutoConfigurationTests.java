package io.github.tieredretry.autoconfigure;

import com.rabbitmq.client.AMQP;
import io.github.tieredretry.observation.DefaultRetryForwardObservationConvention;
import io.github.tieredretry.observation.RetryForwardContext;
import io.github.tieredretry.observation.RetryForwardObservationConvention;
import io.github.tieredretry.observation.RetryObservations;
import io.github.tieredretry.observation.RetryTracingObservationHandler;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.propagation.Propagator;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RetryObservationAutoConfiguration}. No broker is touched: the
 * application points at a port nothing listens on.
 */
class RetryObservationAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = OperationsApplication
		.operationsRunner("observation-autoconfiguration-parking-lot", RetryObservationAutoConfiguration.class);

	@Test
	void observesWhenAnObservationRegistryExists() {
		this.contextRunner.withBean(ObservationRegistry.class, ObservationRegistry::create)
			.run((context) -> assertThat(context).hasSingleBean(RetryObservations.class)
				.doesNotHaveBean(RetryTracingObservationHandler.class));
	}

	@Test
	void backsOffWithoutAnObservationRegistry() {
		this.contextRunner
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RetryObservations.class));
	}

	@Test
	void backsOffWhenRetriesAreDisabled() {
		this.contextRunner.withBean(ObservationRegistry.class, ObservationRegistry::create)
			.withPropertyValues("retry.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RetryObservations.class));
	}

	@Test
	void aUserConventionBeanNamesTheForwardObservations() {
		ObservationRegistry registry = ObservationRegistry.create();
		registry.observationConfig().observationHandler((context) -> true);
		this.contextRunner.withBean(ObservationRegistry.class, () -> registry)
			.withBean(RetryForwardObservationConvention.class, () -> new DefaultRetryForwardObservationConvention() {

				@Override
				public String getName() {
					return "payments.retry.forward";
				}

			})
			.run((context) -> {
				RetryForwardContext forward = RetryForwardContext.hop(new AMQP.BasicProperties(), "orders",
						"retry.delay.5s", "5s", 1);
				context.getBean(RetryObservations.class).startForward(forward).stop();
				assertThat(forward.getName()).isEqualTo("payments.retry.forward");
			});
	}

	@Test
	void springBootsObservationPropertiesSwitchTheObservationsOff() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(ObservationAutoConfiguration.class))
			.withBean(ObservationHandler.class, () -> (context) -> true)
			.withPropertyValues("management.observations.enable.rabbitmq.retry=false")
			.run((context) -> {
				RetryForwardContext forward = RetryForwardContext.hop(new AMQP.BasicProperties(), "orders",
						"retry.delay.5s", "5s", 1);
				assertThat(context.getBean(RetryObservations.class).startForward(forward).isNoop()).isTrue();
			});
	}

	@Test
	void addsTheTracingHandlerWhenThereIsATracerAndAPropagator() {
		this.contextRunner.withBean(ObservationRegistry.class, ObservationRegistry::create)
			.withBean(Tracer.class, () -> Tracer.NOOP)
			.withBean(Propagator.class, () -> Propagator.NOOP)
			.run((context) -> assertThat(context).hasSingleBean(RetryTracingObservationHandler.class));
	}

	@Test
	void worksWithoutMicrometerTracingOnTheClassPath() {
		this.contextRunner
			.withClassLoader(
					new FilteredClassLoader("io.micrometer.tracing", "org.springframework.boot.micrometer.tracing"))
			.withBean(ObservationRegistry.class, ObservationRegistry::create)
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(RetryObservations.class)
				.doesNotHaveBean(RetryTracingObservationHandler.class));
	}

}
