package io.github.tieredretry.autoconfigure;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.assertj.ApplicationContextAssertProvider;
import org.springframework.boot.test.context.runner.ContextConsumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every test of an invalid property asserts on the application that refused to
 * start: the failure is about that property and says how to fix it.
 */
public final class InvalidProperty {

	private InvalidProperty() {
	}

	/**
	 * Startup failed with an {@link InvalidConfigurationPropertyValueException} for the
	 * property whose message contains each of the given parts.
	 */
	public static ContextConsumer<ApplicationContextAssertProvider<?>> failsStartupNaming(String property,
			String... messageParts) {
		return (context) -> {
			assertThat(context).hasFailed();
			assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining(property)
				.hasMessageContainingAll(messageParts)
				.satisfies((failure) -> assertThat(((InvalidConfigurationPropertyValueException) failure).getName())
					.isEqualTo(property));
		};
	}

}
