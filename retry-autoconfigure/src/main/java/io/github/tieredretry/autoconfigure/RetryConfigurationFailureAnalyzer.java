package io.github.tieredretry.autoconfigure;

import io.github.tieredretry.listener.RetryableListenerConfigurationException;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a {@code @RetryableListener} that cannot be applied: which listener, what is
 * wrong, how to fix it.
 */
class RetryConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<RetryableListenerConfigurationException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, RetryableListenerConfigurationException cause) {
		return new FailureAnalysis(
				"@RetryableListener on " + cause.getListener() + " cannot be applied: " + cause.getProblem() + ".",
				cause.getFix(), cause);
	}

}
