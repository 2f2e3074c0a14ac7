package io.github.tieredretry.parkinglot;

import java.time.Clock;
import java.time.Duration;

import io.github.tieredretry.autoconfigure.InvalidProperty;
import io.github.tieredretry.autoconfigure.OperationsApplication;
import io.github.tieredretry.autoconfigure.RetryOperationsAutoConfiguration;
import io.github.tieredretry.internal.actuate.RetryEndpoint;
import io.github.tieredretry.internal.actuate.RetryHealthIndicator;
import io.github.tieredretry.internal.forwarding.MessageForwarder;
import io.github.tieredretry.internal.metrics.RetryEventMetrics;
import io.github.tieredretry.internal.metrics.RetryQueueDepths;
import io.github.tieredretry.internal.parkinglot.DefaultParkingLotService;
import io.github.tieredretry.internal.topology.RetryTopology;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RetryOperationsAutoConfiguration}, which the parking-lot service and
 * the queue depths come from, and for the whole observability set-up backing off when
 * Actuator and Micrometer are absent. No broker is touched: the application points at a
 * port nothing listens on.
 */
class RetryOperationsAutoConfigurationTests {

	private static final String PARKING_LOT = "operations-autoconfiguration-parking-lot";

	private final ApplicationContextRunner contextRunner = OperationsApplication.operationsRunner(PARKING_LOT);

	@Test
	void providesTheParkingLotServiceAndTheQueueDepths() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(ParkingLotService.class).hasSingleBean(RetryQueueDepths.class);
			assertThat(context.getBean(ParkingLotService.class).parkingLot()).isEqualTo(PARKING_LOT);
			assertThat(context.getBean(RetryQueueDepths.class).queues()).containsExactly("retry.delay.1s",
					"retry.delay.5s", PARKING_LOT);
		});
	}

	@Test
	void backsOffWhenRetriesAreDisabled() {
		this.contextRunner.withPropertyValues("retry.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(ParkingLotService.class)
				.doesNotHaveBean(RetryQueueDepths.class));
	}

	@Test
	void usesTheApplicationsOwnBeans() {
		this.contextRunner.withUserConfiguration(CustomOperations.class)
			.run((context) -> assertThat(context).hasSingleBean(RetryQueueDepths.class)
				.hasBean("customDepths")
				.hasSingleBean(ParkingLotService.class)
				.hasBean("customParkingLot"));
	}

	@Test
	void parkingLotOperationsRemainWhenActuatorAndMicrometerAreAbsent() {
		OperationsApplication
			.importedWithout(PARKING_LOT, "org.springframework.boot.actuate", "org.springframework.boot.health",
					"io.micrometer")
			.withPropertyValues("management.endpoints.web.exposure.include=*")
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(ParkingLotService.class)
				.hasSingleBean(RetryQueueDepths.class)
				.doesNotHaveBean(RetryEventMetrics.class)
				.doesNotHaveBean(RetryEndpoint.class)
				.doesNotHaveBean(RetryHealthIndicator.class));
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|',
			value = { "retry.retention.max-age=0s|retry.retention.max-age|Use a positive duration",
					"retry.retention.max-count=-1|retry.retention.max-count|Use 0 or more messages",
					"retry.retention.check-interval=0s|retry.retention.check-interval|Use a positive duration" })
	void invalidRetentionFailsStartupNamingThePropertyAndTheFix(String assignment, String property, String fix) {
		this.contextRunner.withPropertyValues(assignment).run(InvalidProperty.failsStartupNaming(property, fix));
	}

	@Configuration(proxyBeanMethods = false)
	static class CustomOperations {

		@Bean
		RetryQueueDepths customDepths(ConnectionFactory connectionFactory, RetryTopology topology) {
			return new RetryQueueDepths(connectionFactory, topology, Duration.ofMinutes(1), Clock.systemUTC());
		}

		@Bean
		ParkingLotService customParkingLot(ConnectionFactory connectionFactory, MessageForwarder forwarder) {
			return new DefaultParkingLotService(connectionFactory, "custom-parking-lot", forwarder, Clock.systemUTC());
		}

	}

}
