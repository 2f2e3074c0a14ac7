package io.github.tieredretry.observation;

import java.time.Duration;

import io.github.tieredretry.observation.RetryObservationDocumentation.HighCardinalityKeys;
import io.github.tieredretry.observation.RetryObservationDocumentation.LowCardinalityKeys;
import io.micrometer.common.KeyValues;

/**
 * The default {@link RetryForwardObservationConvention}: span {@code <queue> retry},
 * {@code <queue> park} or {@code <queue> hop}, tagged with the queue, tier, outcome,
 * exception and reason; its span also with the attempt, the message id and, for a retry,
 * the delay before it.
 */
public class DefaultRetryForwardObservationConvention implements RetryForwardObservationConvention {

	/** The shared instance. */
	public static final DefaultRetryForwardObservationConvention INSTANCE = //
			new DefaultRetryForwardObservationConvention();

	@Override
	public String getContextualName(RetryForwardContext context) {
		String step = switch (context.getOutcome()) {
			case RetryForwardContext.RETRIED -> "retry";
			case RetryForwardContext.PARKED -> "park";
			default -> context.getOutcome();
		};
		return context.getQueue() + " " + step;
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(RetryForwardContext context) {
		return KeyValues.of(LowCardinalityKeys.QUEUE.withValue(context.getQueue()),
				LowCardinalityKeys.TIER.withValue(ConventionValues.orNone(context.getTier())),
				LowCardinalityKeys.OUTCOME.withValue(context.getOutcome()),
				LowCardinalityKeys.EXCEPTION.withValue(ConventionValues.simpleName(context.getException())),
				LowCardinalityKeys.REASON.withValue(ConventionValues.orNone(context.getReason())));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(RetryForwardContext context) {
		KeyValues values = KeyValues.of(HighCardinalityKeys.ATTEMPT.withValue(String.valueOf(context.getAttempt())));
		Duration delay = context.getDelay();
		if (delay != null) {
			values = values.and(HighCardinalityKeys.DELAY.withValue(delay.toMillis() + "ms"));
		}
		return ConventionValues.withMessageId(values, context);
	}

}
