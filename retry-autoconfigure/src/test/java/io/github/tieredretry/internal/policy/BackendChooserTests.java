package io.github.tieredretry.internal.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.tieredretry.annotation.Backend;
import io.github.tieredretry.policy.BackendChoice;
import io.github.tieredretry.policy.EffectiveRetryPolicy;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link BackendChoice}: the broker holds a listener's retries only where it
 * makes exactly the policy's delays; {@code auto} falls back to the tiers and says why,
 * {@code broker} says what to fix.
 */
class BackendChooserTests {

	private static final EffectiveRetryPolicy LINEAR = new EffectiveRetryPolicy(3,
			List.of(Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(3)), Duration.ofSeconds(1), 2.0,
			Duration.ofHours(1), 0, null, List.of(), List.of());

	@Test
	void aQuorumQueueWhoseDelayedRetryMakesThePolicysDelaysRunsOnTheBrokerFromRabbitMq43() {
		BackendChoice choice = BackendChooser.choose(Backend.AUTO, LINEAR, "4.3.6", List.of(queue(arguments())));

		assertThat(choice.backend()).isEqualTo(Backend.BROKER);
		assertThat(choice.problem()).isNull();
		assertThat(choice.reason()).contains("RabbitMQ 4.3.6 holds each retry in its queue");
	}

	@Test
	void autoRunsOnTheTiersAndSaysWhyWhereTheBrokerCannotHoldTheRetries() {
		assertThat(BackendChooser.choose(Backend.AUTO, LINEAR, "4.0.5", List.of(queue(arguments()))))
			.satisfies((choice) -> {
				assertThat(choice.backend()).isEqualTo(Backend.TIERS);
				assertThat(choice.problem()).isNull();
				assertThat(choice.reason()).contains("RabbitMQ 4.0.5 has no delayed retry");
			});
		assertThat(BackendChooser.choose(Backend.AUTO, LINEAR, "4.3.6", List.of(queue(null))).reason())
			.contains("arguments of queue 'orders' cannot be seen");
		Map<String, Object> classic = arguments();
		classic.remove("x-queue-type");
		assertThat(BackendChooser.choose(Backend.AUTO, LINEAR, "4.3.6", List.of(queue(classic))).reason())
			.contains("queue 'orders' is not a quorum queue");
	}

	@Test
	void delaysThatTheQueueDoesNotMakeAreNeverRunAtOtherDelays() {
		Map<String, Object> slower = arguments();
		slower.put("x-delayed-retry-min", 2000);
		slower.put("x-delayed-retry-max", 6000);

		BackendChoice choice = BackendChooser.choose(Backend.BROKER, LINEAR, "4.3.6", List.of(queue(slower)));

		assertThat(choice.backend()).isEqualTo(Backend.TIERS);
		assertThat(choice.problem()).contains("queue 'orders' delays retries by [2s, 4s, 6s]")
			.contains("not by the policy's [1s, 2s, 3s]");
		assertThat(choice.fix()).contains("x-delayed-retry-min=1000")
			.contains("x-delayed-retry-max=3000")
			.contains("so drain and delete it and let the application declare it again")
			.doesNotContain("set_policy");
	}

	@Test
	void aDeliveryLimitThatEndsTheRetriesEarlyIsAProblem() {
		Map<String, Object> limited = arguments();
		limited.put("x-delivery-limit", 3);

		assertThat(BackendChooser.choose(Backend.BROKER, LINEAR, "4.3.6", List.of(queue(limited))).problem())
			.contains("delivery limit of 3");
		limited.put("x-delivery-limit", 4);
		assertThat(BackendChooser.choose(Backend.BROKER, LINEAR, "4.3.6", List.of(queue(limited))).problem()).isNull();
		limited.put("x-delivery-limit", -1);
		assertThat(BackendChooser.choose(Backend.BROKER, LINEAR, "4.3.6", List.of(queue(limited))).problem()).isNull();
	}

	@Test
	void theFixOfADeliveryLimitThatEndsTheRetriesEarlyIsTheArgumentOfARecreatedQueueNotAPolicy() {
		Map<String, Object> limited = arguments();
		limited.put("x-delivery-limit", 3);

		BackendChoice choice = BackendChooser.choose(Backend.BROKER, LINEAR, "4.3.6", List.of(queue(limited)));

		// A policy's delivery limit cannot raise the argument's, and a queue that exists
		// refuses the argument (DelayedRetryPolicyIntegrationTests in reliability).
		assertThat(choice.fix()).contains("x-delivery-limit of at least 4")
			.contains("refuses a declaration with others (PRECONDITION_FAILED), so drain and delete it")
			.doesNotContain("set_policy");
	}

	@Test
	void aPolicyWhoseDelaysDoNotGrowLinearlyCannotRunOnTheBroker() {
		EffectiveRetryPolicy exponential = new EffectiveRetryPolicy(3, List.of(), Duration.ofSeconds(1), 2.0,
				Duration.ofHours(1), 0, null, List.of(), List.of());

		BackendChoice choice = BackendChooser.choose(Backend.BROKER, exponential, "4.3.6", List.of(queue(arguments())));

		assertThat(choice.problem()).contains("delays [1s, 2s, 4s] do not grow linearly");
		assertThat(choice.fix()).contains("linear delays");
	}

	@Test
	void delaysDrawnAtRandomCannotBeMadeByAQueue() {
		EffectiveRetryPolicy jittered = new EffectiveRetryPolicy(3,
				List.of(Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(3)), Duration.ofSeconds(1),
				2.0, Duration.ofHours(1), 0, null, List.of(), List.of(), 0.2);

		BackendChoice choice = BackendChooser.choose(Backend.BROKER, jittered, "4.3.6", List.of(queue(arguments())));

		assertThat(choice.problem()).contains("drawn at random (jitter 0.2)");
		assertThat(choice.fix()).contains("jitter to 0");
	}

	@Test
	void tiersAreTiers() {
		assertThat(BackendChooser.choose(Backend.TIERS, LINEAR, "4.3.6", List.of(queue(arguments()))).backend())
			.isEqualTo(Backend.TIERS);
	}

	@Test
	void aDeliveryTimeIsHonouredByQuorumQueuesFromRabbitMq43WhateverTheirArguments() {
		BackendChoice choice = BackendChooser.chooseForDeliveryTime(Backend.AUTO, "4.3.6", "orders", "quorum");

		assertThat(choice.backend()).isEqualTo(Backend.BROKER);
		assertThat(choice.reason()).contains("until the delivery time the starter gives it");
		assertThat(BackendChooser.chooseForDeliveryTime(Backend.BROKER, "4.3.6", "orders", "quorum").problem())
			.isNull();
	}

	@Test
	void aDeliveryTimeTheBrokerIgnoresRunsOnTheTiersUnderAutoAndIsAProblemUnderBroker() {
		BackendChoice old = BackendChooser.chooseForDeliveryTime(Backend.AUTO, "4.0.5", "orders", "quorum");
		assertThat(old.backend()).isEqualTo(Backend.TIERS);
		assertThat(old.problem()).isNull();
		assertThat(old.reason()).contains("RabbitMQ 4.0.5 does not honour a delivery time");
		BackendChoice classic = BackendChooser.chooseForDeliveryTime(Backend.AUTO, "4.3.6", "orders", "classic");
		assertThat(classic.backend()).isEqualTo(Backend.TIERS);
		assertThat(classic.reason()).contains("queue 'orders' is a classic queue");
		BackendChoice unknown = BackendChooser.chooseForDeliveryTime(Backend.BROKER, "4.3.6", "orders", null);
		assertThat(unknown.backend()).isEqualTo(Backend.TIERS);
		assertThat(unknown.problem()).contains("the type of queue 'orders' could not be read");
		assertThat(unknown.fix()).contains("set the listener's backend to auto or tiers");
		assertThat(BackendChooser.chooseForDeliveryTime(Backend.TIERS, "4.3.6", "orders", "quorum").backend())
			.isEqualTo(Backend.TIERS);
	}

	@Test
	void theAmqpClientCannotConsumeFromABrokerBefore40WhateverWasAskedFor() {
		for (Backend requested : Backend.values()) {
			BackendChoice choice = BackendChooser.chooseForDeliveryTime(requested, "3.10.8", "orders", null);
			assertThat(choice.problem()).contains("needs RabbitMQ 4.0 or later, and the broker is RabbitMQ 3.10.8");
			assertThat(choice.fix()).contains("AMQP 0-9-1 container factory");
		}
	}

	@Test
	void everyReasonAndFixNamesTheBackendSettingsThatExist() {
		EffectiveRetryPolicy exponential = new EffectiveRetryPolicy(3, List.of(), Duration.ofSeconds(1), 2.0,
				Duration.ofHours(1), 0, null, List.of(), List.of());
		EffectiveRetryPolicy jittered = new EffectiveRetryPolicy(3, List.of(Duration.ofSeconds(1)),
				Duration.ofSeconds(1), 2.0, Duration.ofHours(1), 0, null, List.of(), List.of(), 0.2);
		Map<String, Object> limited = arguments();
		limited.put("x-delivery-limit", 2);
		List<BackendChoice> problems = List.of(
				BackendChooser.choose(Backend.BROKER, LINEAR, "4.0.5", List.of(queue(arguments()))),
				BackendChooser.choose(Backend.BROKER, exponential, "4.3.6", List.of(queue(arguments()))),
				BackendChooser.choose(Backend.BROKER, jittered, "4.3.6", List.of(queue(arguments()))),
				BackendChooser.choose(Backend.BROKER, LINEAR, "4.3.6", List.of(queue(limited))),
				BackendChooser.chooseForDeliveryTime(Backend.BROKER, "4.3.6", "orders", "classic"));

		assertThat(problems).allSatisfy((choice) -> {
			assertThat(choice.problem()).startsWith("the backend asked for is broker, but the broker cannot hold");
			assertThat(choice.fix()).contains("set the listener's backend to auto or tiers "
					+ "(@RetryableListener(backend = Backend.AUTO), retry.policies.<name>.backend or "
					+ "retry.defaults.backend)");
		});
		List<BackendChoice> all = new ArrayList<>(problems);
		all.add(BackendChooser.choose(Backend.AUTO, LINEAR, "4.0.5", List.of(queue(arguments()))));
		all.add(BackendChooser.choose(Backend.TIERS, LINEAR, "4.3.6", List.of(queue(arguments()))));
		all.add(BackendChooser.chooseForDeliveryTime(Backend.TIERS, "4.3.6", "orders", "quorum"));
		// retry.backend is no key: retry.defaults.backend is.
		assertThat(all).allSatisfy((choice) -> assertThat(choice.reason() + " " + choice.problem() + " " + choice.fix())
			.doesNotContain("retry.backend"));
		assertThat(all.get(5).reason())
			.isEqualTo("the backend asked for is auto and the broker cannot hold its retries: RabbitMQ 4.0.5 has no "
					+ "delayed retry (4.3 or later has)");
		assertThat(all.get(6).reason()).isEqualTo("the backend asked for is tiers");
	}

	@Test
	void versionsAreComparedByMajorAndMinor() {
		int[] first = { 4, 3 };
		assertThat(BackendChooser.atLeast("4.3.6", first)).isTrue();
		assertThat(BackendChooser.atLeast("4.10.0", first)).isTrue();
		assertThat(BackendChooser.atLeast("5.0.0", first)).isTrue();
		assertThat(BackendChooser.atLeast("4.2.9", first)).isFalse();
		assertThat(BackendChooser.atLeast("3.13.7", first)).isFalse();
		assertThat(BackendChooser.atLeast("unknown", first)).isFalse();
	}

	private static Map<String, Object> arguments() {
		Map<String, Object> arguments = new LinkedHashMap<>();
		arguments.put("x-queue-type", "quorum");
		arguments.put("x-delayed-retry-type", "failed");
		arguments.put("x-delayed-retry-min", 1000);
		arguments.put("x-delayed-retry-max", 3000);
		return arguments;
	}

	private static BackendChoice.QueueFacts queue(Map<String, ?> arguments) {
		return new BackendChoice.QueueFacts("orders", arguments);
	}

}
