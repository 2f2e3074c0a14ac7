package io.github.tieredretry.observation;

import java.util.concurrent.CompletionException;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.amqp.rabbit.support.micrometer.RabbitMessageReceiverContext;

/**
 * Starts the starter's observations on an {@link ObservationRegistry}. Without one
 * ({@link #DISABLED}, or a registry without handlers) {@link #isEnabled()} is
 * {@code false} and callers create no context at all: a failed message then costs what it
 * cost before observations existed, and a healthy one never gets here.
 */
public final class RetryObservations {

	/** No observations. */
	public static final RetryObservations DISABLED = new RetryObservations(ObservationRegistry.NOOP, null, null);

	private final ObservationRegistry registry;

	private final @Nullable RetryForwardObservationConvention forwardConvention;

	private final @Nullable RetryReplayObservationConvention replayConvention;

	/**
	 * Create the observations.
	 * @param registry the registry
	 * @param forwardConvention the convention of forwards, or {@code null} for the
	 * default
	 * @param replayConvention the convention of replays, or {@code null} for the default
	 */
	public RetryObservations(ObservationRegistry registry,
			@Nullable RetryForwardObservationConvention forwardConvention,
			@Nullable RetryReplayObservationConvention replayConvention) {
		this.registry = registry;
		this.forwardConvention = forwardConvention;
		this.replayConvention = replayConvention;
	}

	/**
	 * Whether anything observes: callers build no context otherwise.
	 * @return whether observations are recorded
	 */
	public boolean isEnabled() {
		return !this.registry.isNoop();
	}

	/**
	 * Start observing a forward; on the consumer thread, so that the delivery's listener
	 * observation is its parent. A tracer writes the forward's trace context into the
	 * context's headers: publish {@link RetrySenderContext#publishedProperties()}.
	 * @param context the forward
	 * @return the started observation, to {@linkplain #stop stop} when the forward is
	 * settled
	 */
	public Observation startForward(RetryForwardContext context) {
		return RetryObservationDocumentation.FORWARD
			.observation(this.forwardConvention, DefaultRetryForwardObservationConvention.INSTANCE, () -> context,
					this.registry)
			.start();
	}

	/**
	 * Start observing the publish of a replayed message.
	 * @param context the replay
	 * @return the started observation, to {@linkplain #stop stop} when the publish is
	 * settled
	 */
	public Observation startReplay(RetryReplayContext context) {
		return RetryObservationDocumentation.REPLAY
			.observation(this.replayConvention, DefaultRetryReplayObservationConvention.INSTANCE, () -> context,
					this.registry)
			.start();
	}

	/**
	 * Record a listener's failure on the delivery's listener observation (Spring AMQP's,
	 * when the container observes), as it would have been recorded had the exception
	 * reached the container: the starter handles it instead, and the attempt's processing
	 * span would otherwise look successful.
	 * @param failure the listener's exception
	 */
	public void listenerFailed(Throwable failure) {
		Observation current = this.registry.getCurrentObservation();
		if (current != null && current.getContext() instanceof RabbitMessageReceiverContext) {
			current.error(failure);
		}
	}

	/**
	 * The observation current on the calling thread (on a consumer thread, Spring AMQP's
	 * listener observation), for work that continues on another thread.
	 * @return the observation, or {@code null}
	 */
	public @Nullable Observation currentObservation() {
		return this.registry.getCurrentObservation();
	}

	/**
	 * Stop an observation when what it observes is settled, on whichever thread settled
	 * it.
	 * @param observation the observation
	 * @param failure why it failed, or {@code null} when it succeeded
	 */
	public static void stop(Observation observation, @Nullable Throwable failure) {
		if (failure != null) {
			observation.error((failure instanceof CompletionException && failure.getCause() != null)
					? failure.getCause() : failure);
		}
		observation.stop();
	}

}
