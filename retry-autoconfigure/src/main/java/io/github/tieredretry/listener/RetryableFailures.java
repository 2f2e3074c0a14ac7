package io.github.tieredretry.listener;

import java.util.List;

import io.github.tieredretry.policy.EffectiveRetryPolicy;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Whether a listener's failure may be retried, asked in order: failures no retry fixes
 * ({@link NonRetryableFailures}), an exception whose cause chain is cyclic, the
 * application's {@link RetryFailureClassifier}s, then the policy's {@code retry-on} /
 * {@code no-retry-on}.
 */
final class RetryableFailures {

	private static final Log logger = LogFactory.getLog(RetryableFailures.class);

	private final RetryableListenerInfo info;

	private final List<RetryFailureClassifier> classifiers;

	private final EffectiveRetryPolicy policy;

	RetryableFailures(RetryableListenerInfo info, List<RetryFailureClassifier> classifiers,
			EffectiveRetryPolicy policy) {
		this.info = info;
		this.classifiers = classifiers;
		this.policy = policy;
	}

	boolean isRetryable(Throwable failure) {
		if (NonRetryableFailures.isNeverRetried(failure)) {
			return false;
		}
		if (NonRetryableFailures.hasCyclicCauseChain(failure)) {
			// Classifying it would never return; retrying an exception this broken is
			// unlikely to help.
			logger.warn("Listener " + this.info.listener() + " threw an exception whose cause chain is cyclic; "
					+ "treating it as not retryable");
			return false;
		}
		Throwable cause = ListenerFailures.unwrap(failure);
		for (RetryFailureClassifier classifier : this.classifiers) {
			RetryFailureClassifier.Classification classification = classify(classifier, cause);
			if (classification == RetryFailureClassifier.Classification.RETRYABLE) {
				return true;
			}
			if (classification == RetryFailureClassifier.Classification.NOT_RETRYABLE) {
				return false;
			}
		}
		try {
			return this.policy.isRetryable(cause);
		}
		catch (RuntimeException | LinkageError | StackOverflowError ex) {
			// The exception broke its own classification (a getCause() that throws, say):
			// the policy's retries still apply, so that it ends parked rather than
			// redelivered for ever.
			return true;
		}
	}

	private RetryFailureClassifier.@Nullable Classification classify(RetryFailureClassifier classifier,
			Throwable failure) {
		try {
			return classifier.classify(this.info, failure);
		}
		catch (RuntimeException | LinkageError | StackOverflowError ex) {
			// A classifier's bug must not decide the message's fate: the policy decides
			// instead.
			logger
				.warn("Failure classifier " + classifier.getClass().getName() + " threw while classifying a failure of "
						+ this.info.listener() + "; the policy's exception types decide instead", ex);
			return null;
		}
	}

}
