package io.github.tieredretry.autoconfigure;

import io.github.tieredretry.topology.RetryTopologyConflictException;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a retry queue or exchange that exists on the broker with other arguments.
 */
class RetryTopologyConflictFailureAnalyzer extends AbstractFailureAnalyzer<RetryTopologyConflictException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, RetryTopologyConflictException cause) {
		String message = cause.getMessage();
		int fix = message.indexOf(". Fix: ");
		String description = (fix >= 0) ? message.substring(0, fix + 1) : message;
		String action = (fix >= 0) ? message.substring(fix + ". Fix: ".length()) : "Delete the conflicting object.";
		return new FailureAnalysis(description, action, cause);
	}

}
