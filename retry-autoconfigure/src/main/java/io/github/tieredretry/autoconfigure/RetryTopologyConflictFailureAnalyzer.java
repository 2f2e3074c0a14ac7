package io.github.tieredretry.autoconfigure;

import io.github.tieredretry.topology.RetryTopologyConflictException;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains retry queues or exchanges that exist on the broker with other arguments: every
 * one of them, and the commands that resolve the conflict on their virtual host.
 */
class RetryTopologyConflictFailureAnalyzer extends AbstractFailureAnalyzer<RetryTopologyConflictException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, RetryTopologyConflictException cause) {
		return new FailureAnalysis(cause.getProblem(), cause.getFix(), cause);
	}

}
