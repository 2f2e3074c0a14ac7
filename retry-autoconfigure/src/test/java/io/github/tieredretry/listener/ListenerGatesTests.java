package io.github.tieredretry.listener;

import java.time.Duration;
import java.util.List;

import io.github.tieredretry.policy.BreakerSettings;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link ListenerGates#WITHOUT_BREAKERS}: without Resilience4j, a listener that
 * asks for a breaker fails startup with the fix, naming the settings that exist.
 */
class ListenerGatesTests {

	@Test
	void listenerWithABreakerButWithoutResilience4jFailsNamingTheDependencyAndTheSettingsThatTurnItOff() {
		BreakerSettings enabled = new BreakerSettings(true, 50, 20, 10, Duration.ofSeconds(30), 3);

		assertThatExceptionOfType(RetryableListenerConfigurationException.class)
			.isThrownBy(() -> ListenerGates.WITHOUT_BREAKERS.gateFor("Orders#onOrder", List.of("orders"), enabled))
			.satisfies((failure) -> assertThat(failure.getFix())
				.isEqualTo("Add io.github.resilience4j:resilience4j-circuitbreaker to the application's dependencies, "
						+ "or switch the breaker off (@RetryableListener(breaker = Breaker.OFF), or "
						+ "retry.policies.<name>.breaker.enabled=false or retry.defaults.breaker.enabled=false, "
						+ "whichever turned it on)."));
		assertThat(
				ListenerGates.WITHOUT_BREAKERS.gateFor("Orders#onOrder", List.of("orders"), BreakerSettings.DISABLED))
			.isSameAs(ListenerGate.ALWAYS_OPEN);
	}

}
