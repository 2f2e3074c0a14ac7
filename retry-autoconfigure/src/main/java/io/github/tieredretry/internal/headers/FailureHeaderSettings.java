package io.github.tieredretry.internal.headers;

/**
 * How a failure is described in the headers of a forwarded message.
 *
 * @param includeStackTrace whether to add {@code retry-stack-trace}
 * @param maxErrorLength the longest {@code retry-error}, in characters
 * @param maxStackTraceLength the longest {@code retry-stack-trace}, in characters
 */
public record FailureHeaderSettings(boolean includeStackTrace, int maxErrorLength, int maxStackTraceLength) {

	/**
	 * Describe a failure with these settings.
	 * @param failure the listener's own exception
	 * @return the details to write
	 */
	public FailureDetails describe(Throwable failure) {
		return FailureDetails.of(failure, this.maxErrorLength, this.includeStackTrace ? this.maxStackTraceLength : -1);
	}

}
