package io.github.tieredretry.autoconfigure;

import io.github.tieredretry.topology.QueueArgumentsConflictException;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains work queues that exist on the broker with other arguments than this start
 * declares for its listeners' backends: each queue, the argument, the backend chosen and
 * why, and the commands that resolve it on its virtual host.
 */
class QueueArgumentsConflictFailureAnalyzer extends AbstractFailureAnalyzer<QueueArgumentsConflictException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, QueueArgumentsConflictException cause) {
		return new FailureAnalysis(cause.getProblem(), cause.getFix(), cause);
	}

}
