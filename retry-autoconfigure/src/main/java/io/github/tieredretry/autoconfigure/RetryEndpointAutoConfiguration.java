package io.github.tieredretry.autoconfigure;

import io.github.tieredretry.internal.actuate.BodilessReplayRequestFilter;
import io.github.tieredretry.internal.actuate.RetryEndpoint;
import io.github.tieredretry.internal.actuate.RetryEndpointWebExtension;
import io.github.tieredretry.internal.console.OperatorActions;
import io.github.tieredretry.internal.console.RetryOverview;
import io.github.tieredretry.parkinglot.ParkingLotService;
import jakarta.servlet.Filter;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration of the {@code retry} Actuator endpoint and its web extension. Like
 * every endpoint it is created only when exposed
 * ({@code management.endpoints.web.exposure.include}); Spring Boot exposes only
 * {@code health} by default.
 */
@AutoConfiguration(after = { TieredRetryAutoConfiguration.class, RetryOperationsAutoConfiguration.class })
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnAvailableEndpoint(RetryEndpoint.class)
@ConditionalOnBean({ RetryOverview.class, ParkingLotService.class, OperatorActions.class })
public final class RetryEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RetryEndpoint retryEndpoint(RetryOverview overview, ParkingLotService parkingLot, OperatorActions actions) {
		return new RetryEndpoint(overview, parkingLot, actions);
	}

	@Bean
	@ConditionalOnBean(RetryEndpoint.class)
	@ConditionalOnMissingBean
	RetryEndpointWebExtension retryEndpointWebExtension(RetryEndpoint endpoint) {
		return new RetryEndpointWebExtension(endpoint);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
	@ConditionalOnClass({ Filter.class, FilterRegistrationBean.class })
	static class BodilessReplayConfiguration {

		@Bean
		FilterRegistrationBean<BodilessReplayRequestFilter> retryBodilessReplayRequestFilter(
				ObjectProvider<PathMappedEndpoints> endpoints) {
			FilterRegistrationBean<BodilessReplayRequestFilter> registration = new FilterRegistrationBean<>(
					new BodilessReplayRequestFilter(() -> {
						PathMappedEndpoints paths = endpoints.getIfAvailable();
						return (paths != null) ? paths.getPath(EndpointId.of("retry")) : null;
					}));
			registration.setName("retryBodilessReplayRequestFilter");
			return registration;
		}

	}

}
