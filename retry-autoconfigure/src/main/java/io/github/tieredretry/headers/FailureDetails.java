package io.github.tieredretry.headers;

import java.io.PrintWriter;
import java.io.StringWriter;

import org.jspecify.annotations.Nullable;

/**
 * What the headers say about a failure, bounded so that a huge exception message or stack trace can
 * never push a message's headers towards the broker's {@code frame_max}.
 *
 * @param exceptionClass the class name of the listener's own exception
 * @param error its message, truncated
 * @param stackTrace its stack trace, truncated, or {@code null} when not included
 */
public record FailureDetails(String exceptionClass, String error, @Nullable String stackTrace) {

	/** Appended to text that was cut. */
	static final String TRUNCATED = "...[truncated]";

	/**
	 * Describe a failure.
	 * @param failure the listener's own exception (already unwrapped)
	 * @param maxErrorLength the longest error message kept, in characters
	 * @param maxStackTraceLength the longest stack trace kept, in characters, or a negative number to leave
	 * the stack trace out
	 * @return the details
	 */
	public static FailureDetails of(Throwable failure, int maxErrorLength, int maxStackTraceLength) {
		String message = failure.getMessage();
		String stackTrace = null;
		if (maxStackTraceLength >= 0) {
			StringWriter writer = new StringWriter();
			failure.printStackTrace(new PrintWriter(writer));
			stackTrace = truncate(writer.toString(), maxStackTraceLength);
		}
		return new FailureDetails(failure.getClass().getName(), truncate((message != null) ? message : "",
				maxErrorLength), stackTrace);
	}

	/**
	 * Cut text to at most {@code max} characters, marking the cut, without splitting a surrogate pair.
	 * @param text the text
	 * @param max the maximum length, in characters
	 * @return the text, or a prefix of it ending in a truncation mark
	 */
	static String truncate(String text, int max) {
		if (text.length() <= max) {
			return text;
		}
		if (max <= TRUNCATED.length()) {
			return text.substring(0, safeEnd(text, max));
		}
		return text.substring(0, safeEnd(text, max - TRUNCATED.length())) + TRUNCATED;
	}

	private static int safeEnd(String text, int end) {
		return (end > 0 && Character.isHighSurrogate(text.charAt(end - 1))) ? end - 1 : end;
	}

}
