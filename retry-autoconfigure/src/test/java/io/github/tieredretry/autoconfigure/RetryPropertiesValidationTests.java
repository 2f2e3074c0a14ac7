package io.github.tieredretry.autoconfigure;

import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Tests for invalid {@code retry.*} values: startup fails naming the property, the value
 * as written and the fix.
 */
class RetryPropertiesValidationTests extends AutoConfigurationTestSupport {

	@ParameterizedTest(name = "{0}")
	@MethodSource("invalidProperties")
	void invalidPropertyFailsStartupNamingThePropertyAndTheFix(String assignment, String property, String fix) {
		this.contextRunner.withPropertyValues(assignment).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining(property)
				.hasMessageContaining(fix)
				.satisfies((failure) -> assertThat(((InvalidConfigurationPropertyValueException) failure).getName())
					.isEqualTo(property));
		});
	}

	static Stream<Arguments> invalidProperties() {
		String longName = "p".repeat(256);
		return Stream.of(Arguments.of("retry.tiers=", "retry.tiers", "at least one tier is required"),
				Arguments.of("retry.tiers=5s,1s", "retry.tiers", "'1s' follows '5s'"),
				Arguments.of("retry.tiers=1s,1s", "retry.tiers", "without duplicates"),
				Arguments.of("retry.tiers=0s,5s", "retry.tiers", "must be a positive duration"),
				Arguments.of("retry.tiers=-1s", "retry.tiers", "must be a positive duration"),
				Arguments.of("retry.tiers=1s,50d", "retry.tiers", "maximum message TTL"),
				Arguments.of("retry.tiers=1500us", "retry.tiers", "whole number of milliseconds"),
				Arguments.of("retry.tiers=5s,1s", "retry.tiers", "Use positive, strictly ascending durations"),
				Arguments.of("retry.defaults.max-retries=-1", "retry.defaults.max-retries", "Use 0 or more retries"),
				Arguments.of("retry.policies.payments.max-retries=-2", "retry.policies.payments.max-retries",
						"Use 0 or more retries"),
				Arguments.of("retry.defaults.immediate-retries=-1", "retry.defaults.immediate-retries",
						"Use 0 or more in-place retries"),
				Arguments.of("retry.defaults.multiplier=0.5", "retry.defaults.multiplier", "at least 1.0"),
				Arguments.of("retry.policies.payments.multiplier=0.99", "retry.policies.payments.multiplier",
						"at least 1.0"),
				Arguments.of("retry.defaults.initial-interval=0s", "retry.defaults.initial-interval",
						"Use a positive duration"),
				Arguments.of("retry.defaults.max-interval=-1s", "retry.defaults.max-interval",
						"Use a positive duration"),
				Arguments.of("retry.defaults.timeout=0s", "retry.defaults.timeout", "Use a positive duration"),
				Arguments.of("retry.policies.payments.timeout=-5m", "retry.policies.payments.timeout",
						"Use a positive duration"),
				Arguments.of("retry.defaults.delays=10s,-1s", "retry.defaults.delays",
						"'-1s' is not usable. Use delays of zero or more"),
				Arguments.of("retry.defaults.retry-on=com.example.NoSuchException", "retry.defaults.retry-on",
						"No class 'com.example.NoSuchException' on the classpath"),
				Arguments.of("retry.policies.payments.no-retry-on=com.example.Missing",
						"retry.policies.payments.no-retry-on", "Use the fully qualified name of an exception class"),
				Arguments.of("retry.defaults.no-retry-on=java.lang.String", "retry.defaults.no-retry-on",
						"'java.lang.String' is not an exception type"),
				Arguments.of("retry.parking-lot= ", "retry.parking-lot", "needs a name"),
				Arguments.of("retry.parking-lot=amq.parking", "retry.parking-lot", "reserved by RabbitMQ"),
				Arguments.of("retry.parking-lot=" + longName, "retry.parking-lot", "at most 255 bytes"),
				Arguments.of("retry.headers.max-error-length=-1", "retry.headers.max-error-length",
						"Use zero or more characters"),
				Arguments.of("retry.headers.max-stack-trace-length=-1", "retry.headers.max-stack-trace-length",
						"Use zero or more characters"),
				Arguments.of("retry.publish.confirm-timeout=0s", "retry.publish.confirm-timeout",
						"Use a positive duration"),
				Arguments.of("retry.publish.confirm-timeout=-1s", "retry.publish.confirm-timeout",
						"Use a positive duration"),
				Arguments.of("retry.publish.failure-initial-pause=-1s", "retry.publish.failure-initial-pause",
						"Use a positive duration"),
				Arguments.of("retry.publish.failure-initial-pause=0s", "retry.publish.failure-initial-pause",
						"Use a positive duration"),
				Arguments.of("retry.publish.failure-max-pause=-1s", "retry.publish.failure-max-pause",
						"Use a positive duration"),
				Arguments.of("retry.topology.check-interval=-1s", "retry.topology.check-interval",
						"Use zero or a positive duration"),
				Arguments.of("retry.defaults.max-interval=36501d", "retry.defaults.max-interval", "at most 100 years"));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("durationsAsWritten")
	void invalidDurationIsShownAsTheUserWroteIt(String[] assignments, String property, String shown) {
		this.contextRunner.withPropertyValues(assignments).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("Property " + property + " with value '" + shown + "' is invalid")
				.hasMessageNotContaining("PT");
		});
	}

	static Stream<Arguments> durationsAsWritten() {
		return Stream.of(Arguments.of(new String[] { "retry.defaults.timeout=0s" }, "retry.defaults.timeout", "0s"),
				Arguments.of(new String[] { "retry.policies.payments.initial-interval=-1500ms" },
						"retry.policies.payments.initial-interval", "-1500ms"),
				Arguments.of(new String[] { "retry.defaults.delays[0]=10s", "retry.defaults.delays[1]=-2m" },
						"retry.defaults.delays", "[10s, -2m]"),
				Arguments.of(new String[] { "retry.tiers[0]=5s", "retry.tiers[1]=1s" }, "retry.tiers", "[5s, 1s]"),
				Arguments.of(new String[] { "retry.publish.confirm-timeout=0ms" }, "retry.publish.confirm-timeout",
						"0s"));
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void misspelledQueueTypeIsAnsweredWithTheValidValuesAsWritten(CapturedOutput output) {
		SpringApplication application = new SpringApplication(EmptyApplication.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		application
			.setDefaultProperties(Map.of("retry.queue-type", "quorom", "spring.rabbitmq.port", UNREACHABLE_PORT));
		assertThatException().isThrownBy(application::run);
		assertThat(output).contains("Failed to bind properties under 'retry.queue-type'")
			.contains("Value: \"quorom\"")
			.containsPattern("The following values are valid:\\s+classic\\s+quorum");
	}

	@Test
	void unknownQueueTypeFailsStartupNamingTheProperty() {
		this.contextRunner.withPropertyValues("retry.queue-type=stream")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("Failed to bind properties under 'retry.queue-type'"));
	}

}
