package io.github.tieredretry.autoconfigure;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import com.jayway.jsonpath.JsonPath;
import io.github.tieredretry.policy.BreakerLayer;
import io.github.tieredretry.policy.PolicyLayer;
import org.junit.jupiter.api.Test;

import org.springframework.beans.BeanWrapperImpl;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RetryProperties}: each default lives in one place (a field
 * initializer, or {@link PolicyLayer#BUILT_IN} for {@code retry.defaults.*}), and the IDE
 * metadata and the configuration reference generated from it show exactly that value. A
 * default written as its user would write it (the metadata's or the reference's text)
 * must bind to the value the starter uses when the key is not set.
 */
class RetryPropertiesTests {

	private static final String METADATA = "target/classes/META-INF/spring-configuration-metadata.json";

	private static final String DEFAULTS_PREFIX = "retry.defaults.";

	@Test
	void metadataDefaultsAreTheDefaultsInForce() throws IOException {
		Map<String, Object> defaults = metadataDefaults();
		assertThat(defaults).containsKeys("retry.enabled", "retry.tiers", "retry.queue-type",
				"retry.adopt-shared-parking-lot", "retry.publish.confirm-timeout", "retry.topology.check-interval");
		defaults.forEach((name, value) -> assertThat(bind(name, text(value))).as("metadata default of %s", name)
			.isEqualTo(defaultInForce(name)));
	}

	@Test
	void everyBuiltInPolicyDefaultIsInTheMetadata() throws IOException {
		assertThat(metadataDefaults()).containsKeys(DEFAULTS_PREFIX + "max-retries",
				DEFAULTS_PREFIX + "initial-interval", DEFAULTS_PREFIX + "multiplier", DEFAULTS_PREFIX + "max-interval",
				DEFAULTS_PREFIX + "jitter", DEFAULTS_PREFIX + "immediate-retries", DEFAULTS_PREFIX + "breaker.enabled",
				DEFAULTS_PREFIX + "breaker.failure-rate-threshold", DEFAULTS_PREFIX + "breaker.sliding-window-size",
				DEFAULTS_PREFIX + "breaker.minimum-calls", DEFAULTS_PREFIX + "breaker.wait-in-open-state",
				DEFAULTS_PREFIX + "breaker.probes-in-half-open-state");
	}

	@Test
	void everyPropertyIsDescribed() throws IOException {
		List<Map<String, Object>> properties = JsonPath.read(metadata(), "$.properties[?(@.name =~ /retry\\..*/)]");
		assertThat(properties).hasSizeGreaterThan(20)
			.allSatisfy(
					(property) -> assertThat(property.get("description")).as("description of %s", property.get("name"))
						.asString()
						.isNotBlank());
	}

	@Test
	void namedPoliciesAreDescribedWithTheirKeys() throws IOException {
		List<String> description = JsonPath.read(metadata(), "$.properties[?(@.name == 'retry.policies')].description");
		assertThat(description).singleElement()
			.asString()
			.contains("max-retries", "delays", "initial-interval", "multiplier", "max-interval", "jitter",
					"immediate-retries", "timeout", "retry-on", "no-retry-on");
		List<String> type = JsonPath.read(metadata(), "$.properties[?(@.name == 'retry.policies')].type");
		// IDEs that complete the keys of map values find them through this type.
		assertThat(type).containsExactly(
				"java.util.Map<java.lang.String,io.github.tieredretry.autoconfigure.RetryPolicyProperties>");
	}

	@Test
	void configurationReferenceShowsTheDefaultsInForce() throws IOException {
		String readme = Files.readString(Path.of("..", "docs", "configuration-reference.md"), StandardCharsets.UTF_8);
		Matcher row = Pattern.compile("(?m)^\\| `(retry\\.[a-z.-]+)` \\| `([^|]+)` \\|").matcher(readme);
		Map<String, String> shown = new LinkedHashMap<>();
		while (row.find()) {
			shown.put(row.group(1), row.group(2));
		}
		assertThat(shown).containsKeys("retry.tiers", "retry.queue-type", "retry.defaults.max-retries",
				"retry.defaults.multiplier", "retry.defaults.jitter", "retry.publish.confirm-timeout");
		shown.forEach((name, value) -> assertThat(bind(name, value))
			.as("default of %s in docs/configuration-reference.md", name)
			.isEqualTo(defaultInForce(name)));
	}

	private static String metadata() throws IOException {
		return Files.readString(Path.of(METADATA), StandardCharsets.UTF_8);
	}

	private static Map<String, Object> metadataDefaults() throws IOException {
		List<Map<String, Object>> properties = JsonPath.read(metadata(),
				"$.properties[?(@.name =~ /retry\\..*/ && @.defaultValue)]");
		Map<String, Object> defaults = new LinkedHashMap<>();
		properties.forEach((property) -> defaults.put((String) property.get("name"), property.get("defaultValue")));
		return defaults;
	}

	private static String text(Object metadataValue) {
		return (metadataValue instanceof List<?> list)
				? list.stream().map(String::valueOf).collect(Collectors.joining(",")) : String.valueOf(metadataValue);
	}

	/**
	 * The value a property gets when a user writes the given text, as the binder converts
	 * it.
	 */
	private static Object bind(String name, String text) {
		RetryProperties bound = new Binder(new MapConfigurationPropertySource(Map.of(name, text)))
			.bind("retry", Bindable.ofInstance(new RetryProperties()))
			.get();
		return new BeanWrapperImpl(bound).getPropertyValue(propertyPath(name));
	}

	/**
	 * The value in force when the key is not set: the field's initial value, or for
	 * retry.defaults.* (whose fields stay unset so that they can be told apart from an
	 * explicit value) the built-in layer's.
	 */
	private static Object defaultInForce(String name) {
		if (name.startsWith(DEFAULTS_PREFIX + "breaker.")) {
			return builtIn(BreakerLayer.class, BreakerLayer.BUILT_IN,
					name.substring((DEFAULTS_PREFIX + "breaker.").length()));
		}
		if (name.equals(DEFAULTS_PREFIX + "backend")) {
			return RetrySettings.DEFAULT_BACKEND;
		}
		if (name.startsWith(DEFAULTS_PREFIX)) {
			String field = camelCase(name.substring(DEFAULTS_PREFIX.length()));
			try {
				return PolicyLayer.class.getMethod(field).invoke(PolicyLayer.BUILT_IN);
			}
			catch (NoSuchMethodException | IllegalAccessException | InvocationTargetException ex) {
				throw new AssertionError("No built-in default for " + name, ex);
			}
		}
		return new BeanWrapperImpl(new RetryProperties()).getPropertyValue(propertyPath(name));
	}

	private static Object builtIn(Class<?> type, Object layer, String key) {
		try {
			return type.getMethod(camelCase(key)).invoke(layer);
		}
		catch (NoSuchMethodException | IllegalAccessException | InvocationTargetException ex) {
			throw new AssertionError("No built-in default for " + key, ex);
		}
	}

	private static String propertyPath(String name) {
		return camelCase(name.substring("retry.".length()));
	}

	private static String camelCase(String kebab) {
		StringBuilder camel = new StringBuilder();
		boolean upper = false;
		for (char c : kebab.toCharArray()) {
			if (c == '-') {
				upper = true;
			}
			else {
				camel.append(upper ? Character.toUpperCase(c) : c);
				upper = false;
			}
		}
		return camel.toString();
	}

}
