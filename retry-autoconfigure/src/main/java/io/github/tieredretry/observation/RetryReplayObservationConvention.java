package io.github.tieredretry.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * The names and key values of observation {@link RetryObservationDocumentation#REPLAY
 * rabbitmq.retry.replay}; declare a bean of this type to replace
 * {@link DefaultRetryReplayObservationConvention}.
 */
public interface RetryReplayObservationConvention extends ObservationConvention<RetryReplayContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof RetryReplayContext;
	}

	@Override
	default String getName() {
		return "rabbitmq.retry.replay";
	}

}
