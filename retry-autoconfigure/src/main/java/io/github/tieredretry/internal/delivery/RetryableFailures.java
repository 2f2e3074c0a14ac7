package io.github.tieredretry.internal.delivery;

import java.util.List;

import io.github.tieredretry.listener.RetryAfterResolver;
import io.github.tieredretry.listener.RetryFailureClassifier;
import io.github.tieredretry.listener.RetryableListenerInfo;
import io.github.tieredretry.policy.EffectiveRetryPolicy;
import io.github.tieredretry.policy.RetryAfter;
import io.github.tieredretry.policy.RetryAfterException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Whether a listener's failure may be retried, asked in order: failures no retry fixes
 * ({@link NonRetryableFailures}), an exception whose cause chain is cyclic, the
 * application's {@link RetryFailureClassifier}s, then the policy's {@code retry-on} /
 * {@code no-retry-on}.
 */
public final class RetryableFailures {

	private static final Log logger = LogFactory.getLog(RetryableFailures.class);

	private final RetryableListenerInfo info;

	private final List<RetryFailureClassifier> classifiers;

	private final EffectiveRetryPolicy policy;

	private final List<RetryAfterResolver> retryAfterResolvers;

	RetryableFailures(RetryableListenerInfo info, ListenerRuntime runtime, EffectiveRetryPolicy policy) {
		this.info = info;
		this.classifiers = runtime.classifiers();
		this.retryAfterResolvers = runtime.retryAfterResolvers();
		this.policy = policy;
	}

	/**
	 * When the failure says its message may be retried: a {@link RetryAfterException} in
	 * its cause chain, else the first resolver's answer.
	 * @param failure what the listener threw
	 * @return when, or {@code null} for the policy's delay
	 */
	@Nullable RetryAfter retryAfter(Throwable failure) {
		Throwable cause = ListenerFailures.unwrap(failure);
		RetryAfter thrown = RetryAfterException.findIn(cause);
		if (thrown != null) {
			return thrown;
		}
		for (RetryAfterResolver resolver : this.retryAfterResolvers) {
			try {
				RetryAfter resolved = resolver.retryAfter(this.info, cause);
				if (resolved != null) {
					return resolved;
				}
			}
			catch (RuntimeException | LinkageError | StackOverflowError ex) {
				logger.warn("Retry-after resolver " + resolver.getClass().getName() + " threw for a failure of "
						+ this.info.listener() + "; the policy's delay applies instead", ex);
			}
		}
		return null;
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
		if (RetryAfterException.findIn(cause) != null && !this.policy.isNoRetryOn(cause)) {
			// The listener said when to retry: retryable, whatever retry-on lists.
			return true;
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
