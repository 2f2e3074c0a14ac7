package io.github.tieredretry.autoconfigure;

import java.util.Map;
import java.util.stream.Stream;

import io.github.tieredretry.annotation.Backend;
import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.internal.install.ListenerPolicies;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Tests for invalid {@code retry.*} values: startup fails naming the property, the value
 * as written and the fix.
 */
class RetryPropertiesValidationTests extends AutoConfigurationTestSupport {

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
			retry.tiers=                            | at least one tier is required
			retry.tiers=5s,1s                       | '1s' follows '5s'
			retry.tiers=1s,1s                       | without duplicates
			retry.tiers=0s,5s                       | must be a positive duration
			retry.tiers=-1s                         | must be a positive duration
			retry.tiers=1s,50d                      | maximum message TTL
			retry.tiers=1500us                      | whole number of milliseconds
			retry.tiers=5s,1s                       | Use positive, strictly ascending durations
			retry.defaults.max-retries=-1           | Use 0 or more retries
			retry.policies.payments.max-retries=-2  | Use 0 or more retries
			retry.defaults.immediate-retries=-1     | Use 0 or more in-place retries
			retry.defaults.multiplier=0.5           | at least 1.0
			retry.policies.payments.multiplier=0.99 | at least 1.0
			retry.defaults.jitter=1.5               | Use a factor from 0 to 1, such as 0.2
			retry.policies.payments.jitter=-0.1     | or 0 for exact delays
			retry.defaults.initial-interval=0s      | Use a positive duration
			retry.defaults.max-interval=-1s         | Use a positive duration
			retry.defaults.timeout=0s               | Use a positive duration
			retry.policies.payments.timeout=-5m     | Use a positive duration
			retry.defaults.delays=10s,-1s           | '-1s' is not usable. Use delays of zero or more
			retry.defaults.retry-on=com.example.NoSuchException| No class 'com.example.NoSuchException' on the classpath
			retry.policies.payments.no-retry-on=com.example.Missing | Use the fully qualified name of an exception class
			retry.defaults.no-retry-on=java.lang.String | 'java.lang.String' is not an exception type
			"retry.parking-lot= "                   | needs a name
			retry.parking-lot=amq.parking           | reserved by RabbitMQ
			retry.headers.max-error-length=-1       | Use zero or more characters
			retry.headers.max-stack-trace-length=-1 | Use zero or more characters
			retry.publish.confirm-timeout=0s        | Use a positive duration
			retry.publish.confirm-timeout=-1s       | Use a positive duration
			retry.publish.failure-initial-pause=-1s | Use a positive duration
			retry.publish.failure-initial-pause=0s  | Use a positive duration
			retry.publish.failure-max-pause=-1s     | Use a positive duration
			retry.topology.check-interval=-1s       | Use zero or a positive duration
			retry.defaults.max-interval=36501d      | at most 100 years
			# What every listener and policy inherits cannot itself inherit.
			retry.defaults.backend=inherit          | set it to auto, tiers or broker (unset means auto)
			""")
	@MethodSource("tooLongNames")
	void invalidPropertyFailsStartupNamingThePropertyAndTheFix(String assignment, String fix) {
		this.contextRunner.withPropertyValues(assignment)
			.run(InvalidProperty.failsStartupNaming(propertyOf(assignment), fix));
	}

	static Stream<Arguments> tooLongNames() {
		String longName = "p".repeat(256);
		return Stream.of(Arguments.of("retry.parking-lot=" + longName, "longer than RabbitMQ's 255 bytes"),
				Arguments.of("spring.application.name=" + longName, "set a shorter retry.parking-lot"));
	}

	/**
	 * The property an assignment sets: its key, without the index of a list element.
	 */
	private static String propertyOf(String assignment) {
		return assignment.substring(0, assignment.indexOf('=')).replaceFirst("\\[\\d+]$", "");
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

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
			retry.defaults.delays[0]=30          | Write '30ms' for milliseconds
			retry.tiers=1s, 5                    | '5' has no unit
			retry.defaults.initial-interval=1000 | Write '1000ms' for milliseconds or '1000s' for seconds
			retry.policies.payments.breaker.wait-in-open-state=30 | '30' has no unit
			retry.publish.confirm-timeout=5000   | '5000' has no unit
			""")
	@MethodSource("durationListWithoutUnits")
	void durationWithoutAUnitFailsStartupWithTheFix(String assignment, String fix) {
		String property = propertyOf(assignment);
		this.contextRunner.withPropertyValues(assignment)
			.run(InvalidProperty.failsStartupNaming(property, "Property " + property + " with value", fix));
	}

	static Stream<Arguments> durationListWithoutUnits() {
		return Stream.of(Arguments.of("retry.policies.flaky.delays=2,4,8",
				"'2' has no unit, so it is ambiguous (Spring Boot would read it as milliseconds). Write '2ms' "
						+ "for milliseconds or '2s' for seconds, and give every duration its unit, for example "
						+ "retry.policies.flaky.delays=2s, 4s, 8s."));
	}

	@Test
	void yamlNumbersWithoutAUnitFailStartupToo() {
		// YAML's "delays: [2, 4, 8]" binds from Integer values, not from text.
		this.contextRunner
			.withInitializer((context) -> context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("application.yml", Map.of("retry.policies.flaky.delays[0]", 2))))
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("Property retry.policies.flaky.delays with value '2' is invalid")
				.hasMessageContaining("Write '2ms' for milliseconds or '2s' for seconds"));
	}

	@Test
	void environmentVariablesAreCheckedForUnitsButNotForUnknownKeys() {
		this.contextRunner
			.withInitializer((context) -> context.getEnvironment()
				.getPropertySources()
				.addFirst(new SystemEnvironmentPropertySource("test-systemEnvironment", Map.of("RETRY_COUNT", "3"))))
			.run((context) -> assertThat(context).hasNotFailed());
		this.contextRunner
			.withInitializer((context) -> context.getEnvironment()
				.getPropertySources()
				.addFirst(new SystemEnvironmentPropertySource("test-systemEnvironment",
						Map.of("RETRY_DEFAULTS_INITIALINTERVAL", "500"))))
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("'500' has no unit"));
	}

	@Test
	void zeroNeedsNoUnit() {
		this.contextRunner.withPropertyValues("retry.topology.check-interval=0", "retry.defaults.delays=0, 1s")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', textBlock = """
			retry.polices.doomed.max-retries=1   | retry.policies.doomed.max-retries
			retry.policies.doomed.max-retry=1    | retry.policies.doomed.max-retries
			retry.defaults.breaker.enable=true   | retry.defaults.breaker.enabled
			retry.teirs=1s                       | retry.tiers
			retry.parking-lots=x                 | retry.parking-lot
			retry.policies.Payments.delay=1s     | retry.policies.Payments.delays
			# Written a level too high: the key below that ends as written.
			retry.backend=tiers                  | retry.defaults.backend
			retry.maxRetries=3                   | retry.defaults.max-retries
			retry.breaker.enabled=true           | retry.defaults.breaker.enabled
			retry.policies.payments.enabled=true | retry.policies.payments.breaker.enabled
			retry.delays[0]=1s                   | retry.defaults.delays[0]
			""")
	void unknownKeyFailsStartupNamingTheKeyAndTheClosestKnownKey(String assignment, String closest) {
		String key = assignment.substring(0, assignment.indexOf('='));
		this.contextRunner.withPropertyValues(assignment).run((context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			assertThat(failure).rootCause()
				.isInstanceOf(UnknownRetryPropertyException.class)
				.hasMessageContaining("Unknown property '" + key + "'")
				.hasMessageContaining("The closest known key is '" + closest + "'");
			FailureAnalysis analysis = new UnknownRetryPropertyFailureAnalyzer().analyze(failure);
			assertThat(analysis).isNotNull();
			assertThat(analysis.getDescription()).startsWith("Property '" + key + "'")
				.contains("is not a key of tiered retries");
			assertThat(analysis.getAction()).startsWith("Did you mean '" + closest + "'?");
		});
	}

	@Test
	void backendIsResolvedFromTheListenerThenItsPolicyThenTheDefaultsAndInheritInAPolicyMeansTheDefaults() {
		this.contextRunner
			.withPropertyValues("retry.defaults.backend=tiers", "retry.policies.payments.backend=inherit",
					"retry.policies.orders.backend=broker")
			.run((context) -> {
				ListenerPolicies policies = context.getBean(ListenerPolicies.class);
				assertThat(policies.resolveBackend(annotationOf("payments"))).isEqualTo(Backend.TIERS);
				assertThat(policies.resolveBackend(annotationOf("orders"))).isEqualTo(Backend.BROKER);
				assertThat(policies.resolveBackend(annotationOf("ordersOnAuto"))).isEqualTo(Backend.AUTO);
				assertThat(policies.resolveBackend(annotationOf("none"))).isEqualTo(Backend.TIERS);
			});
	}

	private static RetryableListener annotationOf(String method) throws NoSuchMethodException {
		return BackendListeners.class.getDeclaredMethod(method).getAnnotation(RetryableListener.class);
	}

	static class BackendListeners {

		@RetryableListener(policy = "payments")
		void payments() {
		}

		@RetryableListener(policy = "orders")
		void orders() {
		}

		@RetryableListener(policy = "orders", backend = Backend.AUTO)
		void ordersOnAuto() {
		}

		@RetryableListener
		void none() {
		}

	}

	@Test
	void policyNamesAreTheUsersOwnAndKeysMayBeWrittenInAnyRelaxedForm() {
		this.contextRunner
			.withPropertyValues("retry.policies.doomed.max-retries=1", "retry.policies.paymnets.maxRetries=2",
					"retry.policies[big-batch].breaker.wait_in_open_state=10s",
					"retry.defaults.retry-on[0]=java.io.IOException", "retry.console.path=/ops",
					"retry.replay.batch-size=10")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void unknownKeyInAMisspeltPolicyIsReportedAsStartupFailureOfTheApplication() {
		SpringApplication application = new SpringApplication(EmptyApplication.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		application.setDefaultProperties(
				Map.of("retry.polices.doomed.max-retries", "1", "spring.rabbitmq.port", UNREACHABLE_PORT));
		assertThatException().isThrownBy(application::run)
			.havingRootCause()
			.isInstanceOf(UnknownRetryPropertyException.class)
			.withMessageContaining("retry.policies.doomed.max-retries");
	}

	@Test
	void unknownQueueTypeFailsStartupNamingTheProperty() {
		this.contextRunner.withPropertyValues("retry.queue-type=stream")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("Failed to bind properties under 'retry.queue-type'"));
	}

}
