package io.github.tieredretry.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.tieredretry.topology.QueueType;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * Configuration properties for tiered, non-blocking RabbitMQ listener retries.
 */
@ConfigurationProperties("retry")
public class RetryProperties {

	/**
	 * Whether tiered retries are enabled. When false, nothing is declared on the broker
	 * and no listener is wrapped: a failure of a @RetryableListener then does what its
	 * container does without retries, by default requeue and immediate redelivery: a hot
	 * loop from a classic queue, or from a quorum queue on RabbitMQ 3.x or 4.3+; dropped
	 * (or dead-lettered) after 21 deliveries from a quorum queue on RabbitMQ 4.0 to 4.2.
	 * A WARN at startup names those listeners.
	 */
	private boolean enabled = true;

	/**
	 * Delay tiers: positive, strictly ascending durations. Each becomes a queue with that
	 * fixed TTL, named after it (for example retry.delay.10s). A retry waits in the
	 * smallest tier at least as long as its delay; longer delays go through the largest
	 * tier repeatedly.
	 */
	private List<Duration> tiers = new ArrayList<>(List.of(Duration.ofSeconds(1), Duration.ofSeconds(5),
			Duration.ofSeconds(30), Duration.ofMinutes(2), Duration.ofMinutes(10), Duration.ofHours(1)));

	/**
	 * Type of the tier queues and of the parking lot. Quorum tiers dead-letter
	 * at-least-once and keep retries through broker restarts and crashes; they also work
	 * on a single node. Classic is an explicit choice for development or throw-away data:
	 * classic tiers dead-letter at most once and can lose a retry that expires while the
	 * broker stops or crashes. Every application on a virtual host must use the same
	 * type, and an existing queue never changes type: see docs/migration.md to switch.
	 */
	private QueueType queueType = QueueType.QUORUM;

	/**
	 * Name of this application's parking-lot queue, where messages go after their last
	 * retry or when they can never succeed. Unset: 'retry.parking-lot.' followed by
	 * spring.application.name, so that applications sharing a virtual host never see each
	 * other's parked messages; the shared 'retry.parking-lot' for an application without
	 * a name.
	 */
	private @Nullable String parkingLot;

	/**
	 * Whether this application moves its own parked messages (those whose retry-queue is
	 * the queue of one of its listeners) from the shared parking lot retry.parking-lot,
	 * where earlier versions parked them, into its own parking lot: once it is ready and
	 * then every minute while the shared one holds any. Body and properties are moved
	 * unchanged, each confirmed before it leaves the shared parking lot.
	 */
	private boolean adoptSharedParkingLot = true;

	/**
	 * Retry settings for every retryable listener, unless its policy or annotation says
	 * otherwise.
	 */
	@NestedConfigurationProperty
	private final RetryPolicyProperties defaults = new RetryPolicyProperties();

	/**
	 * Named retry policies, selected with @RetryableListener(policy = "name"). Each has
	 * the keys of retry.defaults (max-retries, delays, initial-interval, multiplier,
	 * max-interval, jitter, immediate-retries, timeout, retry-on, no-retry-on); keys left
	 * unset come from retry.defaults.
	 */
	private final Map<String, RetryPolicyProperties> policies = new LinkedHashMap<>();

	private final Headers headers = new Headers();

	private final Publish publish = new Publish();

	private final Metrics metrics = new Metrics();

	private final Topology topology = new Topology();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public List<Duration> getTiers() {
		return this.tiers;
	}

	public void setTiers(List<Duration> tiers) {
		this.tiers = tiers;
	}

	public QueueType getQueueType() {
		return this.queueType;
	}

	public void setQueueType(QueueType queueType) {
		this.queueType = queueType;
	}

	public @Nullable String getParkingLot() {
		return this.parkingLot;
	}

	public void setParkingLot(@Nullable String parkingLot) {
		this.parkingLot = parkingLot;
	}

	public boolean isAdoptSharedParkingLot() {
		return this.adoptSharedParkingLot;
	}

	public void setAdoptSharedParkingLot(boolean adoptSharedParkingLot) {
		this.adoptSharedParkingLot = adoptSharedParkingLot;
	}

	public RetryPolicyProperties getDefaults() {
		return this.defaults;
	}

	public Map<String, RetryPolicyProperties> getPolicies() {
		return this.policies;
	}

	public Headers getHeaders() {
		return this.headers;
	}

	public Publish getPublish() {
		return this.publish;
	}

	public Metrics getMetrics() {
		return this.metrics;
	}

	public Topology getTopology() {
		return this.topology;
	}

	/**
	 * What forwarded messages say about their failure.
	 */
	public static class Headers {

		/**
		 * Whether to add the failure's stack trace in header 'retry-stack-trace'
		 * (truncated).
		 */
		private boolean includeStackTrace = false;

		/**
		 * Longest exception message kept in header 'retry-error', in characters.
		 */
		private int maxErrorLength = 1000;

		/**
		 * Longest stack trace kept in header 'retry-stack-trace', in characters.
		 */
		private int maxStackTraceLength = 8000;

		public boolean isIncludeStackTrace() {
			return this.includeStackTrace;
		}

		public void setIncludeStackTrace(boolean includeStackTrace) {
			this.includeStackTrace = includeStackTrace;
		}

		public int getMaxErrorLength() {
			return this.maxErrorLength;
		}

		public void setMaxErrorLength(int maxErrorLength) {
			this.maxErrorLength = maxErrorLength;
		}

		public int getMaxStackTraceLength() {
			return this.maxStackTraceLength;
		}

		public void setMaxStackTraceLength(int maxStackTraceLength) {
			this.maxStackTraceLength = maxStackTraceLength;
		}

	}

	/**
	 * How failed messages are forwarded to tiers and the parking lot.
	 */
	public static class Publish {

		/**
		 * How long to wait for the broker to confirm a forward. Without a confirm the
		 * original message is not acked, and the forward is tried again after a pause.
		 */
		private Duration confirmTimeout = Duration.ofSeconds(5);

		/**
		 * Pause of a consumer after a failed forward, doubled on each consecutive failure
		 * up to failure-max-pause, so that a requeued message is not redelivered in a hot
		 * loop.
		 */
		private Duration failureInitialPause = Duration.ofMillis(500);

		/**
		 * Longest pause of a consumer after consecutive failed forwards.
		 */
		private Duration failureMaxPause = Duration.ofSeconds(15);

		public Duration getConfirmTimeout() {
			return this.confirmTimeout;
		}

		public void setConfirmTimeout(Duration confirmTimeout) {
			this.confirmTimeout = confirmTimeout;
		}

		public Duration getFailureInitialPause() {
			return this.failureInitialPause;
		}

		public void setFailureInitialPause(Duration failureInitialPause) {
			this.failureInitialPause = failureInitialPause;
		}

		public Duration getFailureMaxPause() {
			return this.failureMaxPause;
		}

		public void setFailureMaxPause(Duration failureMaxPause) {
			this.failureMaxPause = failureMaxPause;
		}

	}

	/**
	 * Upkeep of the retry topology on the broker.
	 */
	public static class Topology {

		/**
		 * How often to check that the tier queues, the parking lot and the exchanges
		 * still exist, and declare whatever was deleted. Zero disables the check.
		 */
		private Duration checkInterval = Duration.ofSeconds(30);

		public Duration getCheckInterval() {
			return this.checkInterval;
		}

		public void setCheckInterval(Duration checkInterval) {
			this.checkInterval = checkInterval;
		}

	}

	/**
	 * Retry metrics.
	 */
	public static class Metrics {

		/**
		 * Whether to record retry metrics (rabbitmq.retry.*) when a MeterRegistry is
		 * available.
		 */
		private boolean enabled = true;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

	}

	private final Replay replay = new Replay();

	private final Retention retention = new Retention();

	private final Console console = new Console();

	private final Broker broker = new Broker();

	private final Async async = new Async();

	private final DelayedSend delayedSend = new DelayedSend();

	public Replay getReplay() {
		return this.replay;
	}

	public Retention getRetention() {
		return this.retention;
	}

	public Broker getBroker() {
		return this.broker;
	}

	public DelayedSend getDelayedSend() {
		return this.delayedSend;
	}

	public Async getAsync() {
		return this.async;
	}

	/**
	 * Asynchronous listeners: those that return a CompletableFuture or a Mono, and Kotlin
	 * suspend functions.
	 */
	public static class Async {

		/**
		 * Longest time an attempt of an asynchronous listener may take before its result
		 * is cancelled and the attempt fails (AsyncAttemptTimeoutException, retried or
		 * parked like any failure). The message stays unacknowledged meanwhile, so keep
		 * it well below RabbitMQ's consumer timeout (30 minutes by default), also with
		 * the policy's immediate retries, which run one attempt after another.
		 */
		private Duration attemptTimeout = Duration.ofMinutes(1);

		public Duration getAttemptTimeout() {
			return this.attemptTimeout;
		}

		public void setAttemptTimeout(Duration attemptTimeout) {
			this.attemptTimeout = attemptTimeout;
		}

	}

	/**
	 * Delayed sends (the DelayedSender bean): messages published to an exchange after a
	 * delay, through the tiers and this application's scheduled queue.
	 */
	public static class DelayedSend {

		/**
		 * Whether to offer the DelayedSender bean and consume the scheduled queue, where
		 * the tiers return delayed sends to be sent on once due. Every instance of an
		 * application that sends delayed messages must keep it on: delayed sends wait in
		 * the scheduled queue while none consumes it.
		 */
		private boolean enabled = true;

		/**
		 * The scheduled queue, which the tiers return delayed sends to. Default:
		 * 'retry.scheduled.' followed by spring.application.name, or 'retry.scheduled'
		 * for an application without a name.
		 */
		private @Nullable String queue;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public @Nullable String getQueue() {
			return this.queue;
		}

		public void setQueue(@Nullable String queue) {
			this.queue = queue;
		}

	}

	/**
	 * The broker backend: retries held in the listener's own queue by RabbitMQ 4.3's
	 * delayed retry.
	 */
	public static class Broker {

		/**
		 * Whether to add the delayed-retry arguments (x-delayed-retry-type 'failed',
		 * x-delayed-retry-min and -max that make the policy's delays) to the quorum work
		 * queues that the application declares as Queue beans, for listeners whose
		 * backend is 'auto' or 'broker', so that RabbitMQ 4.3 can hold their retries.
		 * Only for queues that do not exist yet: a queue's arguments never change.
		 */
		private boolean declareQueueArguments;

		public boolean isDeclareQueueArguments() {
			return this.declareQueueArguments;
		}

		public void setDeclareQueueArguments(boolean declareQueueArguments) {
			this.declareQueueArguments = declareQueueArguments;
		}

	}

	public Console getConsole() {
		return this.console;
	}

	/**
	 * Replays of parked messages back to their origin queue.
	 */
	public static class Replay {

		/**
		 * Most messages a replay publishes per second, so that replaying a large parking
		 * lot does not starve live traffic on the origin queues.
		 */
		private double rate = 50;

		/**
		 * Most messages one pass of a replay moves before it gives back the parked
		 * messages it holds unacknowledged (those it skipped) and starts the next pass.
		 * At the rate, a pass holds messages for at most batch-size / rate seconds.
		 */
		private int batchSize = 100;

		public double getRate() {
			return this.rate;
		}

		public void setRate(double rate) {
			this.rate = rate;
		}

		public int getBatchSize() {
			return this.batchSize;
		}

		public void setBatchSize(int batchSize) {
			this.batchSize = batchSize;
		}

	}

	/**
	 * Retention of parked messages: off unless a limit is set, so that nothing disappears
	 * unless configured.
	 */
	public static class Retention {

		/**
		 * Longest time a message stays parked: older ones are removed for good (counted,
		 * logged and audited). Unset keeps them forever.
		 */
		private @Nullable Duration maxAge;

		/**
		 * Most messages kept in the parking lot: the oldest beyond it are removed for
		 * good (counted, logged and audited). Unset keeps them all.
		 */
		private @Nullable Long maxCount;

		/**
		 * How often the limits are applied, the first time at startup.
		 */
		private Duration checkInterval = Duration.ofMinutes(1);

		public @Nullable Duration getMaxAge() {
			return this.maxAge;
		}

		public void setMaxAge(@Nullable Duration maxAge) {
			this.maxAge = maxAge;
		}

		public @Nullable Long getMaxCount() {
			return this.maxCount;
		}

		public void setMaxCount(@Nullable Long maxCount) {
			this.maxCount = maxCount;
		}

		public Duration getCheckInterval() {
			return this.checkInterval;
		}

		public void setCheckInterval(Duration checkInterval) {
			this.checkInterval = checkInterval;
		}

	}

	/**
	 * The operations console: a web page to look at the retry tiers and the parking lot
	 * and to replay or purge failure groups.
	 */
	public static class Console {

		/**
		 * Whether to serve the operations console (Spring MVC applications only). It can
		 * replay and purge parked messages: put it behind a login.
		 */
		private boolean enabled = false;

		/**
		 * Path of the operations console.
		 */
		private String path = "/retry-console";

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public String getPath() {
			return this.path;
		}

		public void setPath(String path) {
			this.path = path;
		}

	}

}
