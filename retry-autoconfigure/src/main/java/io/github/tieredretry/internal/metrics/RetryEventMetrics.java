package io.github.tieredretry.internal.metrics;

import io.github.tieredretry.event.ForwardFailedEvent;
import io.github.tieredretry.event.MessageParkedEvent;
import io.github.tieredretry.event.MessageRecoveredEvent;
import io.github.tieredretry.event.ParkedMessagesExpiredEvent;
import io.github.tieredretry.event.RetryScheduledEvent;
import io.github.tieredretry.internal.headers.FailureDetails;
import io.github.tieredretry.internal.topology.RetryTopology;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.BaseUnits;

import org.springframework.context.event.EventListener;

/**
 * Records the retry events of every retryable listener as Micrometer meters: counter
 * {@value #MESSAGES} and timers {@value #RECOVERY} and {@value #DELAY}.
 * <p>
 * Every {@value #MESSAGES} counter carries the same five tags, with {@value #NONE} where
 * a tag does not apply, because some registries (Prometheus) require one set of tag keys
 * per meter name. Tag values are bounded: queues of retryable listeners, four outcomes,
 * the configured tiers, four parked reasons and the exception classes the listeners
 * throw.
 */
public final class RetryEventMetrics {

	/**
	 * Counter of retry outcomes, tagged {@code queue}, {@code outcome}, {@code tier},
	 * {@code reason} and {@code exception}.
	 */
	public static final String MESSAGES = "rabbitmq.retry.messages";

	/**
	 * Timer from a message's first failure to its successful processing, tagged
	 * {@code queue}.
	 */
	public static final String RECOVERY = "rabbitmq.retry.recovery";

	/**
	 * Timer of the delay before each scheduled retry, as drawn (the policy's delay,
	 * spread by its jitter), tagged {@code queue}.
	 */
	public static final String DELAY = "rabbitmq.retry.delay";

	/**
	 * Counter of parked messages the retention removed for good, tagged
	 * {@code parking-lot} and {@code limit} ({@code max-age} or {@code max-count}).
	 */
	public static final String EXPIRED = "rabbitmq.retry.parking-lot.expired";

	/** Value of a tag that does not apply to an outcome. */
	public static final String NONE = "none";

	private final MeterRegistry registry;

	public RetryEventMetrics(MeterRegistry registry) {
		this.registry = registry;
	}

	@EventListener
	public void onRetryScheduled(RetryScheduledEvent event) {
		count(event.queue(), "retried", event.tier(), NONE, event.exception());
		Timer.builder(DELAY)
			.description("Delay before each scheduled retry, as drawn with the policy's jitter")
			.tag("queue", event.queue())
			.register(this.registry)
			.record(event.delay());
	}

	@EventListener
	public void onMessageParked(MessageParkedEvent event) {
		count(event.queue(), "parked", NONE, event.reason().value(), event.exception());
	}

	@EventListener
	public void onParkedMessagesExpired(ParkedMessagesExpiredEvent event) {
		expired(event.parkingLot(), "max-age", event.olderThanMaxAge());
		expired(event.parkingLot(), "max-count", event.beyondMaxCount());
	}

	private void expired(String parkingLot, String limit, long count) {
		Counter.builder(EXPIRED)
			.description("Parked messages the retention removed for good")
			.tag("parking-lot", parkingLot)
			.tag("limit", limit)
			.register(this.registry)
			.increment(count);
	}

	@EventListener
	public void onMessageRecovered(MessageRecoveredEvent event) {
		count(event.queue(), "recovered", NONE, NONE, event.exception());
		Timer.builder(RECOVERY)
			.description("Time from a message's first failure to its successful processing after retries")
			.tag("queue", event.queue())
			.register(this.registry)
			.record(event.recoveryTime());
	}

	@EventListener
	public void onForwardFailed(ForwardFailedEvent event) {
		String target = event.target();
		String tier = target.startsWith(RetryTopology.TIER_QUEUE_PREFIX)
				? target.substring(RetryTopology.TIER_QUEUE_PREFIX.length()) : NONE;
		count(event.queue(), "forward-failed", tier, NONE, event.exception());
	}

	private void count(String queue, String outcome, String tier, String reason, String exception) {
		Counter.builder(MESSAGES)
			.description("Messages of retryable listeners that were retried, recovered, parked, or whose forward "
					+ "to a tier or the parking lot failed")
			.baseUnit(BaseUnits.MESSAGES)
			.tags(Tags.of("queue", queue, "outcome", outcome, "tier", tier, "reason", reason, "exception",
					simpleName(exception)))
			.register(this.registry)
			.increment();
	}

	/**
	 * The simple name of a class name, like {@link Class#getSimpleName()}: short and
	 * bounded in metric tags.
	 * @param className a fully qualified class name, possibly empty
	 * @return the simple name, or {@value #NONE} when there is none
	 */
	static String simpleName(String className) {
		String name = FailureDetails.simpleName(className);
		return name.isEmpty() ? NONE : name;
	}

}
