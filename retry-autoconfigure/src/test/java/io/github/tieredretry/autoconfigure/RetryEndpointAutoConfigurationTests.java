package io.github.tieredretry.autoconfigure;

import io.github.tieredretry.internal.actuate.RetryEndpoint;
import io.github.tieredretry.internal.actuate.RetryEndpointWebExtension;
import io.github.tieredretry.internal.console.RetryOverview;
import io.github.tieredretry.internal.metrics.RetryQueueDepths;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.parkinglot.ParkingLotService;
import org.junit.jupiter.api.Test;

import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.convert.support.ConfigurableConversionService;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RetryEndpointAutoConfiguration}. No broker is touched: the application
 * points at a port nothing listens on.
 */
class RetryEndpointAutoConfigurationTests {

	private static final String PARKING_LOT = "endpoint-autoconfiguration-parking-lot";

	private final ApplicationContextRunner contextRunner = OperationsApplication
		.operationsRunner(PARKING_LOT, RetryEndpointAutoConfiguration.class)
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
		OperationsApplication.importedWithout(PARKING_LOT, "org.springframework.boot.actuate")
			.withPropertyValues("management.endpoints.web.exposure.include=retry")
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
			.withBean("customRetryEndpoint", RetryEndpoint.class)
			.run((context) -> assertThat(context).hasSingleBean(RetryEndpoint.class).hasBean("customRetryEndpoint"));
	}

	@Test
	void theEndpointDescribesTheConfiguredTopologyEvenWhenTheBrokerIsUnreachable() {
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=retry").run((context) -> {
			RetryOverview.Description retry = context.getBean(RetryEndpoint.class).retry();
			assertThat(retry.tiers()).extracting(RetryOverview.Tier::queue)
				.containsExactly("retry.delay.1s", "retry.delay.5s");
			assertThat(retry.tiers()).allSatisfy((tier) -> assertThat(tier.depth()).isNull());
			assertThat(retry.parkingLot().queue()).isEqualTo(PARKING_LOT);
			assertThat(retry.depthsFailure()).isNotBlank();
			assertThat(context).hasSingleBean(RetryTopology.class)
				.hasSingleBean(RetryQueueDepths.class)
				.hasSingleBean(ParkingLotService.class);
		});
	}

}
