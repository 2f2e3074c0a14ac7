package io.github.tieredretry.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.tieredretry.annotation.Backend;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * One retry policy. Unset fields inherit: a named policy from retry.defaults,
 * retry.defaults from the built-in values ({@code PolicyLayer.BUILT_IN}, shown as the
 * defaults of the retry.defaults.* keys).
 */
public class RetryPolicyProperties {

	/**
	 * Retries after the first attempt (Spring Boot's listener retry counts the same way
	 * since 4.1: max-retries 3 there is max-retries 3 here).
	 */
	private @Nullable Integer maxRetries;

	/**
	 * Delays before retry 1, 2, ... (the last one repeats), for example '10s, 100s, 1h'.
	 * Overrides the exponential back-off.
	 */
	private List<Duration> delays = new ArrayList<>();

	/**
	 * Exponential back-off: delay before the first retry.
	 */
	private @Nullable Duration initialInterval;

	/**
	 * Exponential back-off: factor between consecutive delays, at least 1.0.
	 */
	private @Nullable Double multiplier;

	/**
	 * Exponential back-off: longest delay.
	 */
	private @Nullable Duration maxInterval;

	/**
	 * Spread of each retry's delay, a factor from 0 to 1: the delay is drawn uniformly
	 * between delay x (1 - jitter) and delay x (1 + jitter), then served by the tiers as
	 * any delay (never early, late by at most the smallest tier). 0 keeps delays exact;
	 * 0.2 is recommended where many messages fail at once, so that their retries do not
	 * return in one wave.
	 */
	private @Nullable Double jitter;

	/**
	 * In-place retries, without delay, before the first tiered retry (they block the
	 * consumer thread briefly, so keep them few).
	 */
	private @Nullable Integer immediateRetries;

	/**
	 * No retry is scheduled to fall due later than the first failure plus this; the
	 * message is parked with reason 'timeout' instead.
	 */
	private @Nullable Duration timeout;

	/**
	 * Fully qualified names of exceptions that are retried, matched through the cause
	 * chain. Empty means every exception.
	 */
	private List<String> retryOn = new ArrayList<>();

	/**
	 * Fully qualified names of exceptions that are never retried (the message is parked
	 * at once), matched through the cause chain. Wins over retry-on.
	 */
	private List<String> noRetryOn = new ArrayList<>();

	/**
	 * Where failed messages wait for their retry: 'tiers' (republished to the delay
	 * tiers), 'broker' (held in the listener's own quorum queue by RabbitMQ 4.3's delayed
	 * retry; startup fails where that cannot make the policy's delays) or 'auto' (the
	 * broker where it can, the tiers elsewhere). Unset in retry.defaults means 'auto'; in
	 * a named policy, unset or 'inherit' means what retry.defaults.backend says.
	 */
	private @Nullable Backend backend;

	/**
	 * Circuit breaker of the listeners of this policy.
	 */
	@NestedConfigurationProperty
	private final Breaker breaker = new Breaker();

	public @Nullable Integer getMaxRetries() {
		return this.maxRetries;
	}

	public void setMaxRetries(@Nullable Integer maxRetries) {
		this.maxRetries = maxRetries;
	}

	public List<Duration> getDelays() {
		return this.delays;
	}

	public void setDelays(List<Duration> delays) {
		this.delays = delays;
	}

	public @Nullable Duration getInitialInterval() {
		return this.initialInterval;
	}

	public void setInitialInterval(@Nullable Duration initialInterval) {
		this.initialInterval = initialInterval;
	}

	public @Nullable Double getMultiplier() {
		return this.multiplier;
	}

	public void setMultiplier(@Nullable Double multiplier) {
		this.multiplier = multiplier;
	}

	public @Nullable Duration getMaxInterval() {
		return this.maxInterval;
	}

	public void setMaxInterval(@Nullable Duration maxInterval) {
		this.maxInterval = maxInterval;
	}

	public @Nullable Double getJitter() {
		return this.jitter;
	}

	public void setJitter(@Nullable Double jitter) {
		this.jitter = jitter;
	}

	public @Nullable Integer getImmediateRetries() {
		return this.immediateRetries;
	}

	public void setImmediateRetries(@Nullable Integer immediateRetries) {
		this.immediateRetries = immediateRetries;
	}

	public @Nullable Duration getTimeout() {
		return this.timeout;
	}

	public void setTimeout(@Nullable Duration timeout) {
		this.timeout = timeout;
	}

	public List<String> getRetryOn() {
		return this.retryOn;
	}

	public void setRetryOn(List<String> retryOn) {
		this.retryOn = retryOn;
	}

	public List<String> getNoRetryOn() {
		return this.noRetryOn;
	}

	public void setNoRetryOn(List<String> noRetryOn) {
		this.noRetryOn = noRetryOn;
	}

	public @Nullable Backend getBackend() {
		return this.backend;
	}

	public void setBackend(@Nullable Backend backend) {
		this.backend = backend;
	}

	public Breaker getBreaker() {
		return this.breaker;
	}

	/**
	 * A listener's circuit breaker: while its failures spike (its downstream is down),
	 * its consumers pause instead of running every message through its retries. Needs
	 * io.github.resilience4j:resilience4j-circuitbreaker. Unset fields inherit like the
	 * policy's.
	 */
	public static class Breaker {

		/**
		 * Whether listeners of this policy have a circuit breaker. Built-in default:
		 * false.
		 */
		private @Nullable Boolean enabled;

		/**
		 * Failure rate, in percent, of the latest messages at or above which the listener
		 * pauses. Failures no retry fixes (no-retry-on, unconvertible payloads) do not
		 * count. Built-in default: 50.
		 */
		private @Nullable Float failureRateThreshold;

		/**
		 * How many of the latest outcomes the failure rate is computed over. Built-in
		 * default: 20.
		 */
		private @Nullable Integer slidingWindowSize;

		/**
		 * How many outcomes are needed before the listener may pause. Built-in default:
		 * 10.
		 */
		private @Nullable Integer minimumCalls;

		/**
		 * How long the listener pauses before it tries a few messages again. Built-in
		 * default: 30s.
		 */
		private @Nullable Duration waitInOpenState;

		/**
		 * How many messages a paused listener tries before it resumes (all succeed) or
		 * pauses again. Built-in default: 3.
		 */
		private @Nullable Integer probesInHalfOpenState;

		public @Nullable Boolean getEnabled() {
			return this.enabled;
		}

		public void setEnabled(@Nullable Boolean enabled) {
			this.enabled = enabled;
		}

		public @Nullable Float getFailureRateThreshold() {
			return this.failureRateThreshold;
		}

		public void setFailureRateThreshold(@Nullable Float failureRateThreshold) {
			this.failureRateThreshold = failureRateThreshold;
		}

		public @Nullable Integer getSlidingWindowSize() {
			return this.slidingWindowSize;
		}

		public void setSlidingWindowSize(@Nullable Integer slidingWindowSize) {
			this.slidingWindowSize = slidingWindowSize;
		}

		public @Nullable Integer getMinimumCalls() {
			return this.minimumCalls;
		}

		public void setMinimumCalls(@Nullable Integer minimumCalls) {
			this.minimumCalls = minimumCalls;
		}

		public @Nullable Duration getWaitInOpenState() {
			return this.waitInOpenState;
		}

		public void setWaitInOpenState(@Nullable Duration waitInOpenState) {
			this.waitInOpenState = waitInOpenState;
		}

		public @Nullable Integer getProbesInHalfOpenState() {
			return this.probesInHalfOpenState;
		}

		public void setProbesInHalfOpenState(@Nullable Integer probesInHalfOpenState) {
			this.probesInHalfOpenState = probesInHalfOpenState;
		}

	}

}
