package io.github.tieredretry.autoconfigure;

import io.github.tieredretry.internal.console.OperatorActions;
import io.github.tieredretry.internal.console.RetryConsoleController;
import io.github.tieredretry.internal.console.RetryOverview;
import io.github.tieredretry.parkinglot.ParkingLotService;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.web.servlet.DispatcherServlet;

/**
 * Auto-configuration of the operations console ({@code retry.console.enabled=true}), in
 * Spring MVC applications. It can replay and purge parked messages: put
 * {@code retry.console.path} behind a login.
 */
@AutoConfiguration(after = RetryOperationsAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
@ConditionalOnBooleanProperty("retry.console.enabled")
@ConditionalOnBean({ RetryOverview.class, ParkingLotService.class, OperatorActions.class })
public final class RetryConsoleAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RetryConsoleController retryConsoleController(RetryOverview overview, ParkingLotService parkingLot,
			OperatorActions actions, RetryProperties properties) {
		String path = properties.getConsole().getPath();
		if (path == null || !path.matches("/[A-Za-z0-9._~/-]*[A-Za-z0-9._~-]")) {
			throw new InvalidConfigurationPropertyValueException("retry.console.path", path,
					"Use a path that starts with '/', does not end with '/' and has no spaces or placeholders, "
							+ "such as '/retry-console' or '/ops/retries'.");
		}
		return new RetryConsoleController(overview, parkingLot, actions);
	}

}
