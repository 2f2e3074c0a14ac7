package io.github.tieredretry.observation;

import io.github.tieredretry.observation.RetryObservationDocumentation.HighCardinalityKeys;
import io.github.tieredretry.observation.RetryObservationDocumentation.LowCardinalityKeys;
import io.micrometer.common.KeyValues;

/**
 * The default {@link RetryReplayObservationConvention}: span {@code <queue> replay},
 * tagged with the origin queue, outcome, the exception the message was parked for, and
 * why it stayed parked.
 */
public class DefaultRetryReplayObservationConvention implements RetryReplayObservationConvention {

	/** The shared instance. */
	public static final DefaultRetryReplayObservationConvention INSTANCE = //
			new DefaultRetryReplayObservationConvention();

	@Override
	public String getContextualName(RetryReplayContext context) {
		return context.getQueue() + " replay";
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(RetryReplayContext context) {
		return KeyValues.of(LowCardinalityKeys.QUEUE.withValue(context.getQueue()),
				LowCardinalityKeys.OUTCOME.withValue(context.getOutcome()),
				LowCardinalityKeys.EXCEPTION.withValue(ConventionValues.simpleName(context.getException())),
				LowCardinalityKeys.REASON.withValue(ConventionValues.orNone(context.getStayReason())));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(RetryReplayContext context) {
		return ConventionValues.withMessageId(
				KeyValues.of(HighCardinalityKeys.REPLAY.withValue(String.valueOf(context.getReplay()))), context);
	}

}
