package io.github.tieredretry.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a {@code retry.*} key that does not exist: which key, where it is set, and the
 * closest key that does exist.
 */
class UnknownRetryPropertyFailureAnalyzer extends AbstractFailureAnalyzer<UnknownRetryPropertyException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, UnknownRetryPropertyException cause) {
		String where = (cause.getOrigin() != null) ? " (" + cause.getOrigin() + ")" : "";
		String description = "Property '" + cause.getKey() + "'" + where
				+ " is not a key of tiered retries; it would be ignored.";
		String action = "Did you mean '" + cause.getClosestKnownKey() + "'? Correct the key, or remove it. Every "
				+ "retry.* key is listed in docs/configuration-reference.md and completed by IDEs from the "
				+ "configuration metadata.";
		return new FailureAnalysis(description, action, cause);
	}

}
