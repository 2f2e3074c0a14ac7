package io.github.tieredretry.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * The names and key values of observation {@link RetryObservationDocumentation#FORWARD
 * rabbitmq.retry.forward}; declare a bean of this type to replace
 * {@link DefaultRetryForwardObservationConvention}.
 */
public interface RetryForwardObservationConvention extends ObservationConvention<RetryForwardContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof RetryForwardContext;
	}

	@Override
	default String getName() {
		return "rabbitmq.retry.forward";
	}

}
