package io.github.tieredretry.observation;

import io.github.tieredretry.internal.headers.FailureDetails;
import io.github.tieredretry.observation.RetryObservationDocumentation.HighCardinalityKeys;
import io.micrometer.common.KeyValues;
import org.jspecify.annotations.Nullable;

/**
 * Key values the default conventions share.
 */
final class ConventionValues {

	private ConventionValues() {
	}

	static String orNone(@Nullable String value) {
		return (value != null && !value.isEmpty()) ? value : RetryObservationDocumentation.NONE;
	}

	/**
	 * Simple class names keep the tag short and bounded, as in metric
	 * {@code rabbitmq.retry.messages}.
	 * @param className a fully qualified class name, or {@code null}
	 * @return the simple name, or the placeholder value for none
	 */
	static String simpleName(@Nullable String className) {
		return orNone((className != null) ? FailureDetails.simpleName(className) : null);
	}

	static KeyValues withMessageId(KeyValues values, RetrySenderContext context) {
		String messageId = context.getMessageId();
		return (messageId != null) ? values.and(HighCardinalityKeys.MESSAGE_ID.withValue(messageId)) : values;
	}

}
