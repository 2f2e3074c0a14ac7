package io.github.tieredretry.autoconfigure;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.tieredretry.internal.install.ListenerPolicies;
import io.github.tieredretry.policy.EffectiveRetryPolicy;
import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.ByteArrayResource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The configuration example on the README's first screen binds to what it says: a
 * newcomer copies it.
 */
class ReadmeConfigurationExampleTests {

	@Test
	void readmeYamlExampleBindsToTheTiersAndPoliciesItShows() throws IOException {
		String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);
		Matcher yaml = Pattern.compile("```yaml\\n(.*?)```", Pattern.DOTALL).matcher(readme);
		assertThat(yaml.find()).as("a yaml block in the README").isTrue();
		StandardEnvironment environment = new StandardEnvironment();
		List<PropertySource<?>> sources = new YamlPropertySourceLoader().load("README",
				new ByteArrayResource(yaml.group(1).getBytes(StandardCharsets.UTF_8)));
		sources.forEach(environment.getPropertySources()::addFirst);
		RetryProperties properties = Binder.get(environment).bind("retry", RetryProperties.class).get();

		assertThat(RetrySettings.tiers(properties).tiers()).containsExactly(Duration.ofSeconds(1),
				Duration.ofSeconds(5), Duration.ofSeconds(30), Duration.ofMinutes(2), Duration.ofMinutes(10),
				Duration.ofHours(1));
		ListenerPolicies policies = RetrySettings.policies(properties, getClass().getClassLoader());
		EffectiveRetryPolicy payments = policies.resolveNamed("payments");
		assertThat(payments.maxRetries()).isEqualTo(8);
		assertThat(payments.delays()).containsExactly(Duration.ofSeconds(10), Duration.ofSeconds(100),
				Duration.ofHours(1), Duration.ofHours(2), Duration.ofHours(10));
		EffectiveRetryPolicy defaults = policies.resolveNamed("");
		assertThat(defaults.maxRetries()).isEqualTo(5);
		assertThat(defaults.delayBeforeRetry(3)).isEqualTo(Duration.ofSeconds(4));
		assertThat(defaults.maxInterval()).isEqualTo(Duration.ofHours(1));
	}

}
