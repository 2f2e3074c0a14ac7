package io.github.tieredretry.autoconfigure;

import io.github.tieredretry.internal.actuate.RetryEndpoint;
import io.github.tieredretry.internal.actuate.RetryEndpointWebExtension;
import io.github.tieredretry.internal.console.OperatorActions;
import io.github.tieredretry.internal.console.RetryOverview;
import io.github.tieredretry.internal.metrics.RetryQueueDepths;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.testbrokers.Ports;
import org.junit.jupiter.api.Test;

import org.springframework.boot.amqp.autoconfigure.RabbitAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.convert.support.ConfigurableConversionService;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RetryEndpointAutoConfiguration}. No broker is touched: the application
 * points at a port nothing listens on.
 */
class RetryEndpointAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RabbitAutoConfiguration.class, TieredRetryAutoConfiguration.class,
				RetryOperationsAutoConfiguration.class, RetryEndpointAutoConfiguration.class))
		.withPropertyValues("spring.rabbitmq.host=127.0.0.1", "spring.rabbitmq.port=" + Ports.unused(),
				"retry.parking-lot=endpoint-autoconfiguration-parking-lot", "retry.tiers=1s, 5s")
		// As in an application: lenient conversion, e.g. of
		// management.endpoint.retry.access=none.
		.withInitializer((context) -> context.getEnvironment()
			.setConversionService((ConfigurableConversionService) ApplicationConversionService.getSharedInstance()));

	@Test
	void isNotCreatedUnlessExposed() {
		this.contextRunner.run((context) -> assertThat(context).doesNotHaveBean(RetryEndpoint.class));
	}

	@Test
	void isCreatedWithItsWebExtensionWhenExposedOverTheWeb() {
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=retry")
			.run((context) -> assertThat(context).hasSingleBean(RetryEndpoint.class)
				.hasSingleBean(RetryEndpointWebExtension.class));
	}

	@Test
	void isCreatedWhenExposedOverJmx() {
		this.contextRunner
			.withPropertyValues("spring.jmx.enabled=true", "management.endpoints.jmx.exposure.include=retry")
			.run((context) -> assertThat(context).hasSingleBean(RetryEndpoint.class));
	}

	@Test
	void isNotCreatedWhenAccessIsNone() {
		this.contextRunner
			.withPropertyValues("management.endpoints.web.exposure.include=retry",
					"management.endpoint.retry.access=none")
			.run((context) -> assertThat(context).doesNotHaveBean(RetryEndpoint.class));
	}

	@Test
	void backsOffWhenActuatorIsAbsent() {
		// Imported like an application does, so that Spring Boot's class filter applies
		// before any condition.
		new ApplicationContextRunner().withUserConfiguration(ImportedAsInAnApplication.class)
			.withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate"))
			.withPropertyValues("spring.rabbitmq.host=127.0.0.1", "spring.rabbitmq.port=" + Ports.unused(),
					"retry.parking-lot=endpoint-autoconfiguration-parking-lot",
					"management.endpoints.web.exposure.include=retry")
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(ParkingLotService.class)
				.doesNotHaveBean(RetryEndpoint.class));
	}

	@Test
	void backsOffWhenRetriesAreDisabled() {
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=retry", "retry.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RetryEndpoint.class));
	}

	@Test
	void usesTheApplicationsOwnEndpoint() {
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=retry")
			.withUserConfiguration(CustomEndpoint.class)
			.run((context) -> assertThat(context).hasSingleBean(RetryEndpoint.class).hasBean("customRetryEndpoint"));
	}

	@Test
	void theEndpointDescribesTheConfiguredTopologyEvenWhenTheBrokerIsUnreachable() {
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=retry").run((context) -> {
			RetryOverview.Description retry = context.getBean(RetryEndpoint.class).retry();
			assertThat(retry.tiers()).extracting(RetryOverview.Tier::queue)
				.containsExactly("retry.delay.1s", "retry.delay.5s");
			assertThat(retry.tiers()).allSatisfy((tier) -> assertThat(tier.depth()).isNull());
			assertThat(retry.parkingLot().queue()).isEqualTo("endpoint-autoconfiguration-parking-lot");
			assertThat(retry.depthsFailure()).isNotBlank();
			assertThat(context).hasSingleBean(RetryTopology.class)
				.hasSingleBean(RetryQueueDepths.class)
				.hasSingleBean(ParkingLotService.class);
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class CustomEndpoint {

		@Bean
		RetryEndpoint customRetryEndpoint(RetryOverview overview, ParkingLotService parkingLot,
				OperatorActions actions) {
			return new RetryEndpoint(overview, parkingLot, actions);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ RabbitAutoConfiguration.class, TieredRetryAutoConfiguration.class,
			RetryOperationsAutoConfiguration.class, RetryEndpointAutoConfiguration.class })
	static class ImportedAsInAnApplication {

	}

}
