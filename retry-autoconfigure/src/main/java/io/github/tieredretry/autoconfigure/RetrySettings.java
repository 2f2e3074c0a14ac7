package io.github.tieredretry.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.tieredretry.annotation.Backend;
import io.github.tieredretry.internal.headers.FailureHeaderSettings;
import io.github.tieredretry.internal.install.ListenerPolicies;
import io.github.tieredretry.internal.policy.TierLadder;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.github.tieredretry.policy.BreakerLayer;
import io.github.tieredretry.policy.DurationText;
import io.github.tieredretry.policy.EffectiveRetryPolicy;
import io.github.tieredretry.policy.InvalidPolicyValue;
import io.github.tieredretry.policy.PolicyLayer;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.util.ClassUtils;

/**
 * Turns {@link RetryProperties} into validated settings. Every invalid value fails
 * startup with an {@link InvalidConfigurationPropertyValueException} that names the
 * property, the value and the fix.
 */
final class RetrySettings {

	/** Where retries wait unless retry.defaults.backend says otherwise. */
	static final Backend DEFAULT_BACKEND = Backend.AUTO;

	private RetrySettings() {
	}

	static TierLadder tiers(RetryProperties properties) {
		List<Duration> tiers = properties.getTiers();
		String problem = TierLadder.problemWith(tiers);
		if (problem != null) {
			throw new InvalidConfigurationPropertyValueException("retry.tiers", DurationText.of(tiers),
					problem + ". Use positive, strictly ascending durations such as '1s, 5s, 30s, 2m, 10m, 1h'.");
		}
		return TierLadder.of(tiers);
	}

	/**
	 * The name of this application's parking lot: {@code retry.parking-lot} as set, else
	 * {@code retry.parking-lot.} followed by {@code spring.application.name}, else the
	 * shared {@link RetryTopology#SHARED_PARKING_LOT}.
	 * @param properties the properties
	 * @param applicationName {@code spring.application.name}, or {@code null}
	 * @return the name
	 */
	static String parkingLot(RetryProperties properties, @Nullable String applicationName) {
		String name = properties.getParkingLot();
		if (name == null) {
			return (applicationName != null && !applicationName.isBlank())
					? checkedParkingLot(RetryTopology.SHARED_PARKING_LOT + "." + applicationName.strip(),
							"spring.application.name", applicationName)
					: RetryTopology.SHARED_PARKING_LOT;
		}
		if (name.isBlank()) {
			throw new InvalidConfigurationPropertyValueException("retry.parking-lot", name,
					"The parking-lot queue needs a name, for example 'retry.parking-lot.orders'; leave it unset "
							+ "for one named after spring.application.name.");
		}
		return checkedParkingLot(name, "retry.parking-lot", name);
	}

	/** The scheduled queue of applications without a name. */
	static final String SCHEDULED_QUEUE = "retry.scheduled";

	/**
	 * The name of this application's scheduled queue: {@code retry.delayed-send.queue} as
	 * set, else {@code retry.scheduled.} followed by {@code spring.application.name},
	 * else {@code retry.scheduled}.
	 * @param properties the properties
	 * @param applicationName {@code spring.application.name}, or {@code null}
	 * @return the name
	 */
	static String scheduledQueue(RetryProperties properties, @Nullable String applicationName) {
		String name = properties.getDelayedSend().getQueue();
		if (name == null) {
			return (applicationName != null && !applicationName.isBlank())
					? checkedQueueName(SCHEDULED_QUEUE + "." + applicationName.strip(), "spring.application.name",
							applicationName, "scheduled queue", "retry.delayed-send.queue")
					: SCHEDULED_QUEUE;
		}
		if (name.isBlank()) {
			throw new InvalidConfigurationPropertyValueException("retry.delayed-send.queue", name,
					"The scheduled queue needs a name, for example 'retry.scheduled.orders'; leave it unset "
							+ "for one named after spring.application.name.");
		}
		return checkedQueueName(name, "retry.delayed-send.queue", name, "scheduled queue", "retry.delayed-send.queue");
	}

	private static String checkedParkingLot(String name, String property, String value) {
		return checkedQueueName(name, property, value, "parking lot", "retry.parking-lot");
	}

	private static String checkedQueueName(String name, String property, String value, String queue,
			String nameProperty) {
		if (name.startsWith("amq.")) {
			throw new InvalidConfigurationPropertyValueException(property, value,
					"Queue names starting with 'amq.' are reserved by RabbitMQ; choose another name.");
		}
		if (name.getBytes(StandardCharsets.UTF_8).length > 255) {
			throw new InvalidConfigurationPropertyValueException(property, value, "The " + queue + "'s name '" + name
					+ "' is longer than RabbitMQ's 255 bytes; set a shorter " + nameProperty + ".");
		}
		return name;
	}

	static ListenerPolicies policies(RetryProperties properties, @Nullable ClassLoader classLoader) {
		PolicyLayer defaults = layer("retry.defaults", properties.getDefaults(), classLoader);
		Map<String, PolicyLayer> named = new LinkedHashMap<>();
		properties.getPolicies()
			.forEach((name, policy) -> named.put(name, layer("retry.policies." + name, policy, classLoader)));
		BreakerLayer defaultBreaker = breakerLayer("retry.defaults", properties.getDefaults().getBreaker());
		Map<String, BreakerLayer> namedBreakers = new LinkedHashMap<>();
		properties.getPolicies()
			.forEach((name, policy) -> namedBreakers.put(name,
					breakerLayer("retry.policies." + name, policy.getBreaker())));
		Map<String, Backend> namedBackends = new LinkedHashMap<>();
		properties.getPolicies().forEach((name, policy) -> {
			// inherit, in a policy: what retry.defaults.backend says, as when unset.
			if (policy.getBackend() != null && policy.getBackend() != Backend.INHERIT) {
				namedBackends.put(name, policy.getBackend());
			}
		});
		Backend defaultBackend = properties.getDefaults().getBackend();
		if (defaultBackend == Backend.INHERIT) {
			throw new InvalidConfigurationPropertyValueException("retry.defaults.backend", "inherit",
					"retry.defaults.backend is what listeners and policies inherit: set it to auto, tiers or broker "
							+ "(unset means auto)");
		}
		return new ListenerPolicies(defaults, named, defaultBreaker, namedBreakers,
				(defaultBackend != null) ? defaultBackend : DEFAULT_BACKEND, namedBackends);
	}

	private static BreakerLayer breakerLayer(String prefix, RetryPolicyProperties.Breaker breaker) {
		BreakerLayer layer = new BreakerLayer(breaker.getEnabled(), breaker.getFailureRateThreshold(),
				breaker.getSlidingWindowSize(), breaker.getMinimumCalls(), breaker.getWaitInOpenState(),
				breaker.getProbesInHalfOpenState());
		InvalidPolicyValue invalid = layer.invalidValue();
		if (invalid != null) {
			throw new InvalidConfigurationPropertyValueException(prefix + "." + invalid.field(), invalid.valueText(),
					invalid.fix());
		}
		try {
			BreakerLayer.resolve(layer);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidConfigurationPropertyValueException(prefix + ".breaker.minimum-calls",
					breaker.getMinimumCalls(), ex.getMessage() + ". Use at most as many as the sliding window holds.");
		}
		return layer;
	}

	static FailureHeaderSettings headers(RetryProperties properties) {
		RetryProperties.Headers headers = properties.getHeaders();
		if (headers.getMaxErrorLength() < 0) {
			throw new InvalidConfigurationPropertyValueException("retry.headers.max-error-length",
					headers.getMaxErrorLength(), "Use zero or more characters (default 1000).");
		}
		if (headers.getMaxStackTraceLength() < 0) {
			throw new InvalidConfigurationPropertyValueException("retry.headers.max-stack-trace-length",
					headers.getMaxStackTraceLength(), "Use zero or more characters (default 8000).");
		}
		return new FailureHeaderSettings(headers.isIncludeStackTrace(), headers.getMaxErrorLength(),
				headers.getMaxStackTraceLength());
	}

	static Duration topologyCheckInterval(RetryProperties properties) {
		Duration interval = properties.getTopology().getCheckInterval();
		notNegative("retry.topology.check-interval", interval);
		return interval;
	}

	static Duration asyncAttemptTimeout(RetryProperties properties) {
		Duration timeout = properties.getAsync().getAttemptTimeout();
		positive("retry.async.attempt-timeout", timeout);
		return timeout;
	}

	static RetryProperties.Publish publish(RetryProperties properties) {
		RetryProperties.Publish publish = properties.getPublish();
		positive("retry.publish.confirm-timeout", publish.getConfirmTimeout());
		// Zero would make a requeued message come straight back: a hot loop while
		// forwards fail.
		positive("retry.publish.failure-initial-pause", publish.getFailureInitialPause());
		positive("retry.publish.failure-max-pause", publish.getFailureMaxPause());
		return publish;
	}

	private static PolicyLayer layer(String prefix, RetryPolicyProperties policy, @Nullable ClassLoader classLoader) {
		PolicyLayer layer = new PolicyLayer(policy.getMaxRetries(), policy.getDelays(), policy.getInitialInterval(),
				policy.getMultiplier(), policy.getMaxInterval(), policy.getImmediateRetries(), policy.getTimeout(),
				exceptionTypes(prefix + ".retry-on", policy.getRetryOn(), classLoader),
				exceptionTypes(prefix + ".no-retry-on", policy.getNoRetryOn(), classLoader), policy.getJitter());
		InvalidPolicyValue invalid = layer.invalidValue();
		if (invalid == null) {
			return layer;
		}
		if ("delays".equals(invalid.field())) {
			// The property's value is the whole list: say which delay is the problem.
			throw new InvalidConfigurationPropertyValueException(prefix + ".delays",
					DurationText.of(policy.getDelays()),
					"'" + invalid.valueText() + "' is not usable. " + invalid.fix());
		}
		throw new InvalidConfigurationPropertyValueException(prefix + "." + invalid.field(), invalid.valueText(),
				invalid.fix());
	}

	@SuppressWarnings("unchecked")
	private static List<Class<? extends Throwable>> exceptionTypes(String property, List<String> names,
			@Nullable ClassLoader classLoader) {
		List<Class<? extends Throwable>> types = new ArrayList<>();
		for (String name : names) {
			String trimmed = (name != null) ? name.trim() : "";
			Class<?> type;
			try {
				type = ClassUtils.forName(trimmed, classLoader);
			}
			catch (ClassNotFoundException | LinkageError | IllegalArgumentException ex) {
				throw new InvalidConfigurationPropertyValueException(property, name,
						"No class '" + trimmed
								+ "' on the classpath. Use the fully qualified name of an exception class, for example "
								+ "'java.io.IOException' or 'com.example.PaymentDeclinedException'.");
			}
			if (!Throwable.class.isAssignableFrom(type)) {
				throw new InvalidConfigurationPropertyValueException(property, name,
						"'" + trimmed + "' is not an exception type (it does not extend java.lang.Throwable).");
			}
			types.add((Class<? extends Throwable>) type);
		}
		return types;
	}

	private static void positive(String property, @Nullable Duration value) {
		if (value != null
				&& (value.isNegative() || value.isZero() || value.compareTo(EffectiveRetryPolicy.MAX_DURATION) > 0)) {
			throw new InvalidConfigurationPropertyValueException(property, DurationText.of(value),
					"Use a positive duration of at most 100 years, such as '500ms', '10s' or '1h'.");
		}
	}

	private static void notNegative(String property, @Nullable Duration value) {
		if (value == null || value.isNegative()) {
			throw new InvalidConfigurationPropertyValueException(property, DurationText.of(value),
					"Use zero or a positive duration such as '500ms' or '15s'.");
		}
	}

}
