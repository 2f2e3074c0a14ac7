package io.github.tieredretry.internal.policy;

import java.io.IOException;
import java.time.Duration;
import java.util.List;

import io.github.tieredretry.policy.EffectiveRetryPolicy;
import io.github.tieredretry.policy.PolicyLayer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link RetryPolicyResolver}.
 */
class RetryPolicyResolverTests {

	@Test
	void unsetFieldsTakeTheBuiltInDefaults() {
		EffectiveRetryPolicy policy = RetryPolicyResolver.resolve(PolicyLayer.EMPTY, PolicyLayer.EMPTY);
		assertThat(policy)
			.extracting(EffectiveRetryPolicy::maxRetries, EffectiveRetryPolicy::delays,
					EffectiveRetryPolicy::initialInterval, EffectiveRetryPolicy::multiplier,
					EffectiveRetryPolicy::maxInterval, EffectiveRetryPolicy::immediateRetries,
					EffectiveRetryPolicy::timeout, EffectiveRetryPolicy::retryOn, EffectiveRetryPolicy::noRetryOn,
					EffectiveRetryPolicy::jitter)
			.containsExactly(5, List.of(), Duration.ofSeconds(1), 2.0, Duration.ofHours(1), 0, null, List.of(),
					List.of(), 0.0);
	}

	@Test
	void jitterIsTakenFieldByFieldLikeEveryOtherValueWhateverTheBackOff() {
		PolicyLayer defaults = new PolicyLayer(null, List.of(Duration.ofSeconds(10)), null, null, null, null, null,
				null, null, 0.2);
		PolicyLayer named = new PolicyLayer(null, null, Duration.ofSeconds(2), null, null, null, null, null, null, 0.5);
		PolicyLayer annotation = new PolicyLayer(null, null, null, null, null, null, null, null, null, 0.0);
		assertThat(RetryPolicyResolver.resolve(PolicyLayer.EMPTY, PolicyLayer.EMPTY, defaults).jitter()).isEqualTo(0.2);
		// The named policy chooses exponential back-off and keeps its own jitter.
		EffectiveRetryPolicy namedPolicy = RetryPolicyResolver.resolve(PolicyLayer.EMPTY, named, defaults);
		assertThat(namedPolicy.delays()).isEmpty();
		assertThat(namedPolicy.jitter()).isEqualTo(0.5);
		// An explicit 0 on the annotation turns it off; unset inherits.
		assertThat(RetryPolicyResolver.resolve(annotation, named, defaults).jitter()).isZero();
		assertThat(RetryPolicyResolver.resolve(PolicyLayer.EMPTY, PolicyLayer.EMPTY, named).jitter()).isEqualTo(0.5);
	}

	@Test
	void resolvingWithoutLayersGivesTheBuiltInDefaults() {
		EffectiveRetryPolicy policy = RetryPolicyResolver.resolve();
		assertThat(policy.maxRetries()).isEqualTo(5);
		assertThat(policy.delayBeforeRetry(1)).isEqualTo(Duration.ofSeconds(1));
		assertThat(policy.delayBeforeRetry(3)).isEqualTo(Duration.ofSeconds(4));
	}

	@Test
	void annotationWinsOverNamedPolicyWhichWinsOverDefaultsFieldByField() {
		PolicyLayer annotation = new PolicyLayer(2, null, null, null, null, null, null, null, null);
		PolicyLayer named = new PolicyLayer(8, List.of(Duration.ofSeconds(10)), null, null, null, 1, null,
				List.of(IOException.class), null);
		PolicyLayer defaults = new PolicyLayer(3, List.of(Duration.ofSeconds(99)), Duration.ofSeconds(5), 3.0,
				Duration.ofMinutes(10), 4, Duration.ofHours(1), List.of(IllegalStateException.class),
				List.of(IllegalArgumentException.class));
		EffectiveRetryPolicy policy = RetryPolicyResolver.resolve(annotation, named, defaults);
		assertThat(policy.maxRetries()).isEqualTo(2);
		assertThat(policy.delays()).containsExactly(Duration.ofSeconds(10));
		assertThat(policy.immediateRetries()).isEqualTo(1);
		assertThat(policy.retryOn()).containsExactly(IOException.class);
		assertThat(policy.initialInterval()).isEqualTo(Duration.ofSeconds(5));
		assertThat(policy.multiplier()).isEqualTo(3.0);
		assertThat(policy.maxInterval()).isEqualTo(Duration.ofMinutes(10));
		assertThat(policy.timeout()).isEqualTo(Duration.ofHours(1));
		assertThat(policy.noRetryOn()).containsExactly(IllegalArgumentException.class);
	}

	@Test
	void annotationDelaysWinOverNamedAndDefaultDelays() {
		PolicyLayer annotation = new PolicyLayer(null, List.of(Duration.ofSeconds(1), Duration.ofSeconds(2)), null,
				null, null, null, null, null, null);
		PolicyLayer named = new PolicyLayer(null, List.of(Duration.ofSeconds(10)), null, null, null, null, null, null,
				null);
		assertThat(RetryPolicyResolver.resolve(annotation, named, PolicyLayer.EMPTY).delays())
			.containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(2));
	}

	@Test
	void emptyListsCountAsUnset() {
		PolicyLayer annotation = new PolicyLayer(null, List.of(), null, null, null, null, null, List.of(), List.of());
		PolicyLayer defaults = new PolicyLayer(null, List.of(Duration.ofSeconds(30)), null, null, null, null, null,
				List.of(IOException.class), List.of(IllegalArgumentException.class));
		EffectiveRetryPolicy policy = RetryPolicyResolver.resolve(annotation, PolicyLayer.EMPTY, defaults);
		assertThat(policy.delays()).containsExactly(Duration.ofSeconds(30));
		assertThat(policy.retryOn()).containsExactly(IOException.class);
		assertThat(policy.noRetryOn()).containsExactly(IllegalArgumentException.class);
	}

	@Test
	void zeroMaxRetriesIsAValueNotUnset() {
		PolicyLayer annotation = new PolicyLayer(0, null, null, null, null, null, null, null, null);
		PolicyLayer defaults = new PolicyLayer(7, null, null, null, null, null, null, null, null);
		assertThat(RetryPolicyResolver.resolve(annotation, PolicyLayer.EMPTY, defaults).maxRetries()).isZero();
	}

	@Test
	void namedPolicyFieldsWinOverDefaults() {
		PolicyLayer named = new PolicyLayer(null, null, Duration.ofSeconds(2), 1.5, null, null, Duration.ofMinutes(5),
				null, null);
		PolicyLayer defaults = new PolicyLayer(4, null, Duration.ofSeconds(1), 2.0, Duration.ofMinutes(1), null,
				Duration.ofHours(1), null, null);
		EffectiveRetryPolicy policy = RetryPolicyResolver.resolve(PolicyLayer.EMPTY, named, defaults);
		assertThat(policy.maxRetries()).isEqualTo(4);
		assertThat(policy.initialInterval()).isEqualTo(Duration.ofSeconds(2));
		assertThat(policy.multiplier()).isEqualTo(1.5);
		assertThat(policy.maxInterval()).isEqualTo(Duration.ofMinutes(1));
		assertThat(policy.timeout()).isEqualTo(Duration.ofMinutes(5));
	}

	@Test
	void unusableMergedValueIsRejectedNamingTheField() {
		PolicyLayer defaults = new PolicyLayer(null, null, null, 0.5, null, null, null, null, null);
		assertThatIllegalArgumentException().isThrownBy(() -> RetryPolicyResolver.resolve(PolicyLayer.EMPTY, defaults))
			.withMessageStartingWith("multiplier");
		PolicyLayer negativeRetries = new PolicyLayer(-3, null, null, null, null, null, null, null, null);
		assertThatIllegalArgumentException().isThrownBy(() -> RetryPolicyResolver.resolve(negativeRetries))
			.withMessageStartingWith("max-retries");
		PolicyLayer zeroInterval = new PolicyLayer(null, null, Duration.ZERO, null, null, null, null, null, null);
		assertThatIllegalArgumentException().isThrownBy(() -> RetryPolicyResolver.resolve(zeroInterval))
			.withMessageStartingWith("initial-interval");
		PolicyLayer negativeTimeout = new PolicyLayer(null, null, null, null, null, null, Duration.ofSeconds(-1), null,
				null);
		assertThatIllegalArgumentException().isThrownBy(() -> RetryPolicyResolver.resolve(negativeTimeout))
			.withMessageStartingWith("timeout");
		PolicyLayer tooMuchJitter = new PolicyLayer(null, null, null, null, null, null, null, null, null, 1.5);
		assertThatIllegalArgumentException().isThrownBy(() -> RetryPolicyResolver.resolve(tooMuchJitter))
			.withMessageStartingWith("jitter 1.5 is not usable");
	}

	@Test
	void higherLayerCanRepairAnUnusableValueOfALowerLayer() {
		PolicyLayer annotation = new PolicyLayer(null, null, null, 1.5, null, null, null, null, null);
		PolicyLayer defaults = new PolicyLayer(null, null, null, 0.5, null, null, null, null, null);
		assertThat(RetryPolicyResolver.resolve(annotation, defaults).multiplier()).isEqualTo(1.5);
	}

	@Test
	void namedPolicyWithExponentialSettingsOverridesDelaysInheritedFromTheDefaults() {
		PolicyLayer defaults = new PolicyLayer(null, List.of(Duration.ofSeconds(10)), null, null, null, null, null,
				null, null);
		PolicyLayer named = new PolicyLayer(null, null, Duration.ofSeconds(2), 3.0, null, null, null, null, null);
		EffectiveRetryPolicy policy = RetryPolicyResolver.resolve(PolicyLayer.EMPTY, named, defaults);
		assertThat(policy.delays()).isEmpty();
		assertThat(policy.delayBeforeRetry(2)).isEqualTo(Duration.ofSeconds(6));
	}

	@Test
	void exponentialFieldsOfLowerLayersStillFillWhatTheChoosingLayerLeavesUnset() {
		PolicyLayer defaults = new PolicyLayer(null, null, null, null, Duration.ofSeconds(5), null, null, null, null);
		PolicyLayer named = new PolicyLayer(null, null, Duration.ofSeconds(2), null, null, null, null, null, null);
		EffectiveRetryPolicy policy = RetryPolicyResolver.resolve(named, defaults);
		assertThat(policy.delayBeforeRetry(3)).isEqualTo(Duration.ofSeconds(5));
	}

}
