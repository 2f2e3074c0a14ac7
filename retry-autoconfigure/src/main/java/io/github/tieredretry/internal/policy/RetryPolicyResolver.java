package io.github.tieredretry.internal.policy;

import java.time.Duration;
import java.util.List;
import java.util.function.Function;

import io.github.tieredretry.policy.EffectiveRetryPolicy;
import io.github.tieredretry.policy.PolicyLayer;
import org.jspecify.annotations.Nullable;

/**
 * Merges retry settings: annotation attribute, then the named policy, then the defaults,
 * then the built-in values. The first layer that sets a field wins; the choice between
 * explicit delays and exponential back-off is made by the first layer that sets any
 * back-off field.
 */
public final class RetryPolicyResolver {

	private RetryPolicyResolver() {
	}

	/**
	 * Resolve the effective policy.
	 * @param layers the layers, highest precedence first
	 * @return the effective policy
	 * @throws IllegalArgumentException when the merged values are not usable
	 */
	public static EffectiveRetryPolicy resolve(PolicyLayer... layers) {
		PolicyLayer[] all = new PolicyLayer[layers.length + 1];
		System.arraycopy(layers, 0, all, 0, layers.length);
		all[layers.length] = PolicyLayer.BUILT_IN;
		return new EffectiveRetryPolicy(first(all, PolicyLayer::maxRetries), delays(all),
				first(all, PolicyLayer::initialInterval), first(all, PolicyLayer::multiplier),
				first(all, PolicyLayer::maxInterval), first(all, PolicyLayer::immediateRetries),
				firstOrNull(all, PolicyLayer::timeout), firstList(all, PolicyLayer::retryOn),
				firstList(all, PolicyLayer::noRetryOn), first(all, PolicyLayer::jitter));
	}

	// Explicit delays and the exponential back-off are one choice, made by the highest
	// layer that sets any back-off field: a named policy that sets
	// {@code initial-interval} gets exponential back-off even when {@code retry.defaults}
	// has delays (field by field, the inherited delays would silently win).
	private static List<Duration> delays(PolicyLayer[] layers) {
		for (PolicyLayer layer : layers) {
			List<Duration> delays = layer.delays();
			if (delays != null && !delays.isEmpty()) {
				return delays;
			}
			if (layer.initialInterval() != null || layer.multiplier() != null || layer.maxInterval() != null) {
				return List.of();
			}
		}
		return List.of();
	}

	private static <T> T first(PolicyLayer[] layers, Function<PolicyLayer, @Nullable T> field) {
		T value = firstOrNull(layers, field);
		if (value == null) {
			throw new IllegalStateException("Built-in defaults must set every required field");
		}
		return value;
	}

	private static <T> @Nullable T firstOrNull(PolicyLayer[] layers, Function<PolicyLayer, @Nullable T> field) {
		for (PolicyLayer layer : layers) {
			T value = field.apply(layer);
			if (value != null) {
				return value;
			}
		}
		return null;
	}

	private static <T> List<T> firstList(PolicyLayer[] layers, Function<PolicyLayer, @Nullable List<T>> field) {
		for (PolicyLayer layer : layers) {
			List<T> value = field.apply(layer);
			if (value != null && !value.isEmpty()) {
				return value;
			}
		}
		return List.of();
	}

}
