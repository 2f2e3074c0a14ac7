package io.github.tieredretry.policy;

import java.time.Duration;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * One layer of circuit-breaker settings in which any field may be unset ({@code null}):
 * the annotation, a named policy's {@code breaker}, or {@code retry.defaults.breaker}.
 * The first layer that sets a field wins.
 *
 * @param enabled whether the listener has a breaker
 * @param failureRateThreshold the failure rate, in percent, at or above which the breaker
 * opens
 * @param slidingWindowSize how many of the latest outcomes the failure rate is computed
 * over
 * @param minimumCalls how many outcomes the window needs before the breaker may open
 * @param waitInOpenState how long the listener pauses before it tries messages again
 * @param probesInHalfOpenState how many messages it tries before it resumes or pauses
 * again
 */
public record BreakerLayer(@Nullable Boolean enabled, @Nullable Float failureRateThreshold,
		@Nullable Integer slidingWindowSize, @Nullable Integer minimumCalls, @Nullable Duration waitInOpenState,
		@Nullable Integer probesInHalfOpenState) {

	/** A layer with nothing set. */
	public static final BreakerLayer EMPTY = new BreakerLayer(null, null, null, null, null, null);

	/** The built-in defaults: the one place where they are defined. */
	public static final BreakerLayer BUILT_IN = new BreakerLayer(false, 50f, 20, 10, Duration.ofSeconds(30), 3);

	/**
	 * The first value set in this layer that no breaker accepts.
	 * @return what is wrong, or {@code null} when every value that is set can be used
	 */
	public @Nullable InvalidPolicyValue invalidValue() {
		if (this.failureRateThreshold != null && !(this.failureRateThreshold > 0 && this.failureRateThreshold <= 100)) {
			return new InvalidPolicyValue("breaker.failure-rate-threshold", this.failureRateThreshold,
					"a failure rate above 0 and at most 100 (percent)");
		}
		if (this.slidingWindowSize != null && this.slidingWindowSize < 1) {
			return new InvalidPolicyValue("breaker.sliding-window-size", this.slidingWindowSize, "1 or more outcomes");
		}
		if (this.minimumCalls != null && this.minimumCalls < 1) {
			return new InvalidPolicyValue("breaker.minimum-calls", this.minimumCalls, "1 or more outcomes");
		}
		if (this.waitInOpenState != null && (this.waitInOpenState.isNegative() || this.waitInOpenState.isZero()
				|| this.waitInOpenState.compareTo(EffectiveRetryPolicy.MAX_DURATION) > 0)) {
			return new InvalidPolicyValue("breaker.wait-in-open-state", this.waitInOpenState,
					"a positive duration such as '30s' or '2m'");
		}
		if (this.probesInHalfOpenState != null && this.probesInHalfOpenState < 1) {
			return new InvalidPolicyValue("breaker.probes-in-half-open-state", this.probesInHalfOpenState,
					"1 or more messages");
		}
		return null;
	}

	/**
	 * Merge layers, highest precedence first, over the built-in defaults.
	 * @param layers the layers
	 * @return the settings
	 * @throws IllegalArgumentException when the merged values do not fit together
	 */
	public static BreakerSettings resolve(BreakerLayer... layers) {
		BreakerSettings settings = new BreakerSettings(first(layers, BreakerLayer::enabled),
				first(layers, BreakerLayer::failureRateThreshold), first(layers, BreakerLayer::slidingWindowSize),
				first(layers, BreakerLayer::minimumCalls), first(layers, BreakerLayer::waitInOpenState),
				first(layers, BreakerLayer::probesInHalfOpenState));
		if (settings.minimumCalls() > settings.slidingWindowSize()) {
			throw new IllegalArgumentException("breaker.minimum-calls (" + settings.minimumCalls()
					+ ") must not be larger than breaker.sliding-window-size (" + settings.slidingWindowSize() + ")");
		}
		return settings;
	}

	private static <T> T first(BreakerLayer[] layers, Function<BreakerLayer, @Nullable T> field) {
		for (BreakerLayer layer : layers) {
			T value = field.apply(layer);
			if (value != null) {
				return value;
			}
		}
		T builtIn = field.apply(BUILT_IN);
		if (builtIn == null) {
			throw new IllegalStateException("Built-in breaker defaults must set every field");
		}
		return builtIn;
	}

}
