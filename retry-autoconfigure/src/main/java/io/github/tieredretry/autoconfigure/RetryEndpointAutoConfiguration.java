package io.github.tieredretry.autoconfigure;

import io.github.tieredretry.actuate.RetryEndpoint;
import io.github.tieredretry.listener.RetryableListenerRegistry;
import io.github.tieredretry.metrics.RetryQueueDepths;
import io.github.tieredretry.parkinglot.ParkingLotService;
import io.github.tieredretry.topology.RetryTopology;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@code retry} Actuator endpoint. Like every endpoint it is created only when
 * exposed ({@code management.endpoints.web.exposure.include}); Spring Boot exposes only {@code health} by
 * default.
 */
@AutoConfiguration(after = { TieredRetryAutoConfiguration.class, RetryOperationsAutoConfiguration.class })
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnAvailableEndpoint(RetryEndpoint.class)
@ConditionalOnBean({ RetryTopology.class, RetryableListenerRegistry.class, RetryQueueDepths.class,
		ParkingLotService.class })
public final class RetryEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RetryEndpoint retryEndpoint(RetryTopology topology, RetryableListenerRegistry listeners, RetryQueueDepths depths,
			ParkingLotService parkingLot) {
		return new RetryEndpoint(topology, listeners, depths, parkingLot);
	}

}
