package io.github.tieredretry.internal.install;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Pattern;

import io.github.tieredretry.annotation.Backend;
import io.github.tieredretry.annotation.RetryableListener;
import io.github.tieredretry.internal.policy.RetryPolicyResolver;
import io.github.tieredretry.listener.RetryableListenerConfigurationException;
import io.github.tieredretry.policy.BreakerLayer;
import io.github.tieredretry.policy.BreakerSettings;
import io.github.tieredretry.policy.EffectiveRetryPolicy;
import io.github.tieredretry.policy.InvalidPolicyValue;
import io.github.tieredretry.policy.PolicyLayer;

import org.springframework.boot.convert.DurationStyle;

/**
 * Resolves the policy of a {@code @RetryableListener}: annotation attributes first, then
 * the named policy under {@code retry.policies}, then {@code retry.defaults}.
 */
public final class ListenerPolicies {

	private static final Pattern UNITLESS = Pattern.compile("[+-]?\\d+");

	private final PolicyLayer defaults;

	private final Map<String, PolicyLayer> named;

	private final BreakerLayer defaultBreaker;

	private final Map<String, BreakerLayer> namedBreakers;

	private final Backend defaultBackend;

	private final Map<String, Backend> namedBackends;

	/**
	 * Create the resolver, without breaker settings.
	 * @param defaults the {@code retry.defaults} layer
	 * @param named the {@code retry.policies} layers by name
	 */
	public ListenerPolicies(PolicyLayer defaults, Map<String, PolicyLayer> named) {
		this(defaults, named, BreakerLayer.EMPTY, Map.of());
	}

	/**
	 * Create the resolver.
	 * @param defaults the {@code retry.defaults} layer
	 * @param named the {@code retry.policies} layers by name
	 * @param defaultBreaker the {@code retry.defaults.breaker} layer
	 * @param namedBreakers the {@code retry.policies.<name>.breaker} layers by policy
	 * name
	 */
	public ListenerPolicies(PolicyLayer defaults, Map<String, PolicyLayer> named, BreakerLayer defaultBreaker,
			Map<String, BreakerLayer> namedBreakers) {
		this(defaults, named, defaultBreaker, namedBreakers, Backend.AUTO, Map.of());
	}

	/**
	 * Create the resolver.
	 * @param defaults the {@code retry.defaults} layer
	 * @param named the {@code retry.policies} layers by name
	 * @param defaultBreaker the {@code retry.defaults.breaker} layer
	 * @param namedBreakers the {@code retry.policies.<name>.breaker} layers by policy
	 * name
	 * @param defaultBackend {@code retry.defaults.backend}
	 * @param namedBackends {@code retry.policies.<name>.backend} where set, by policy
	 * name
	 */
	public ListenerPolicies(PolicyLayer defaults, Map<String, PolicyLayer> named, BreakerLayer defaultBreaker,
			Map<String, BreakerLayer> namedBreakers, Backend defaultBackend, Map<String, Backend> namedBackends) {
		this.defaults = defaults;
		this.named = Map.copyOf(named);
		this.defaultBreaker = defaultBreaker;
		this.namedBreakers = Map.copyOf(namedBreakers);
		this.defaultBackend = defaultBackend;
		this.namedBackends = Map.copyOf(namedBackends);
	}

	/**
	 * Resolve where a listener's retries wait: the annotation's {@code backend}, then the
	 * named policy's, then {@code retry.defaults.backend}. The policy name was checked by
	 * {@link #resolve}.
	 * @param annotation the listener's annotation
	 * @return the backend asked for
	 */
	public Backend resolveBackend(RetryableListener annotation) {
		if (annotation.backend() != Backend.INHERIT) {
			return annotation.backend();
		}
		return this.namedBackends.getOrDefault(annotation.policy().trim(), this.defaultBackend);
	}

	/**
	 * Resolve a listener's policy.
	 * @param annotation the listener's annotation
	 * @param listener the listener's name, for error messages
	 * @return the effective policy
	 * @throws RetryableListenerConfigurationException naming the listener and the bad
	 * value
	 */
	public EffectiveRetryPolicy resolve(RetryableListener annotation, String listener) {
		PolicyLayer namedLayer = PolicyLayer.EMPTY;
		String policyName = annotation.policy().trim();
		if (!policyName.isEmpty()) {
			namedLayer = this.named.get(policyName);
			if (namedLayer == null) {
				throw new RetryableListenerConfigurationException(listener, "unknown policy '" + policyName + "'",
						"Known policies under retry.policies: " + new TreeSet<>(this.named.keySet())
								+ ". Add retry.policies." + policyName + ".* to your configuration or fix the name.");
			}
		}
		PolicyLayer annotationLayer = layerOf(annotation, listener);
		try {
			return RetryPolicyResolver.resolve(annotationLayer, namedLayer, this.defaults);
		}
		catch (IllegalArgumentException ex) {
			throw new RetryableListenerConfigurationException(listener,
					"the resolved policy is not usable: " + ex.getMessage(),
					"Fix the annotation attribute or the retry.policies/retry.defaults property it inherits.");
		}
	}

	/**
	 * Resolve a listener's circuit breaker: the annotation's {@code breaker} (on or off),
	 * then the named policy's, then {@code retry.defaults.breaker}. The policy name was
	 * checked by {@link #resolve}.
	 * @param annotation the listener's annotation
	 * @param listener the listener's name, for error messages
	 * @return the breaker settings
	 */
	public BreakerSettings resolveBreaker(RetryableListener annotation, String listener) {
		Boolean enabled = switch (annotation.breaker()) {
			case ON -> Boolean.TRUE;
			case OFF -> Boolean.FALSE;
			case INHERIT -> null;
		};
		BreakerLayer annotationLayer = new BreakerLayer(enabled, null, null, null, null, null);
		BreakerLayer namedLayer = this.namedBreakers.getOrDefault(annotation.policy().trim(), BreakerLayer.EMPTY);
		try {
			return BreakerLayer.resolve(annotationLayer, namedLayer, this.defaultBreaker);
		}
		catch (IllegalArgumentException ex) {
			throw new RetryableListenerConfigurationException(listener,
					"its circuit breaker settings do not fit together: " + ex.getMessage(),
					"Fix retry.policies.<name>.breaker.* or retry.defaults.breaker.*.");
		}
	}

	/**
	 * Resolve a named policy (or the defaults for an empty name), without annotation.
	 * @param name the policy name
	 * @return the effective policy
	 */
	public EffectiveRetryPolicy resolveNamed(String name) {
		PolicyLayer layer = name.isEmpty() ? PolicyLayer.EMPTY : this.named.get(name);
		if (layer == null) {
			throw new IllegalArgumentException("Unknown policy '" + name + "'");
		}
		return RetryPolicyResolver.resolve(layer, this.defaults);
	}

	public Map<String, PolicyLayer> named() {
		return this.named;
	}

	private static PolicyLayer layerOf(RetryableListener annotation, String listener) {
		// -1, the attributes' default, means "from the policy".
		Integer maxRetries = (annotation.maxRetries() != -1) ? annotation.maxRetries() : null;
		Double jitter = (annotation.jitter() != -1) ? annotation.jitter() : null;
		List<Duration> delays = new ArrayList<>();
		for (String delay : annotation.delays()) {
			delays.add(parseDelay(delay, listener));
		}
		PolicyLayer layer = new PolicyLayer(maxRetries, delays, null, null, null, null, null,
				Arrays.asList(annotation.retryOn()), Arrays.asList(annotation.noRetryOn()), jitter);
		InvalidPolicyValue invalid = layer.invalidValue();
		if (invalid == null) {
			return layer;
		}
		if ("delays".equals(invalid.field())) {
			throw new RetryableListenerConfigurationException(listener,
					"delay \"" + invalid.valueText() + "\" is not usable", invalid.fix());
		}
		// The other attributes the annotation sets: maxRetries and jitter.
		String attribute = "max-retries".equals(invalid.field()) ? "maxRetries" : invalid.field();
		throw new RetryableListenerConfigurationException(listener,
				attribute + " = " + invalid.valueText() + " is not usable",
				invalid.fix() + " Or -1 (the default) to take the value from the policy.");
	}

	private static Duration parseDelay(String delay, String listener) {
		String fix = "Use durations with a unit, such as \"500ms\", \"10s\", \"2m\" or \"1h\".";
		if (delay == null || delay.isBlank()) {
			throw new RetryableListenerConfigurationException(listener, "delays contains an empty value", fix);
		}
		String trimmed = delay.trim();
		if (UNITLESS.matcher(trimmed).matches()) {
			// Spring Boot reads a bare number as milliseconds, where "10" more often
			// meant seconds.
			throw new RetryableListenerConfigurationException(listener,
					"delay \"" + delay + "\" has no unit, so it is ambiguous",
					"Write \"" + trimmed + "ms\" for milliseconds or \"" + trimmed + "s\" for seconds.");
		}
		try {
			return DurationStyle.detectAndParse(trimmed);
		}
		catch (IllegalArgumentException ex) {
			throw new RetryableListenerConfigurationException(listener, "delay \"" + delay + "\" is not a duration",
					fix);
		}
	}

}
