package io.github.tieredretry.internal.headers;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * What the headers say about a failure, bounded so that a huge exception message or stack
 * trace can never push a message's headers towards the broker's {@code frame_max}.
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
	 * @param maxStackTraceLength the longest stack trace kept, in characters, or a
	 * negative number to leave the stack trace out
	 * @return the details
	 */
	public static FailureDetails of(Throwable failure, int maxErrorLength, int maxStackTraceLength) {
		String message = messageOf(failure, false);
		String stackTrace = null;
		if (maxStackTraceLength >= 0) {
			stackTrace = truncate(stackTraceOf(failure, maxErrorLength), maxStackTraceLength);
		}
		return new FailureDetails(failure.getClass().getName(),
				truncate((message != null) ? message : "", maxErrorLength), stackTrace);
	}

	/**
	 * The simple name of a class name, like {@link Class#getSimpleName()}: short and
	 * bounded, for metric and observation tags.
	 * @param className a fully qualified class name, possibly empty
	 * @return the simple name, empty when there is none
	 */
	public static String simpleName(String className) {
		String name = className.substring(className.lastIndexOf('.') + 1);
		String nested = name.substring(name.lastIndexOf('$') + 1);
		if (!nested.isEmpty() && !Character.isDigit(nested.charAt(0))) {
			name = nested;
		}
		return name.strip();
	}

	/**
	 * An exception's message, or a placeholder when asking for it throws: describing a
	 * failure must never fail, or the message it belongs to could not be retried or
	 * parked.
	 * @param failure the exception
	 * @param localized whether to ask for the localized message
	 * @return the message, {@code null} when it has none
	 */
	static @Nullable String messageOf(Throwable failure, boolean localized) {
		try {
			return localized ? failure.getLocalizedMessage() : failure.getMessage();
		}
		catch (RuntimeException | LinkageError | StackOverflowError ex) {
			return "<" + (localized ? "getLocalizedMessage()" : "getMessage()") + " threw " + ex.getClass().getName()
					+ ">";
		}
	}

	private static @Nullable Throwable causeOf(Throwable failure) {
		try {
			return failure.getCause();
		}
		catch (RuntimeException | LinkageError | StackOverflowError ex) {
			return null;
		}
	}

	private static StackTraceElement[] framesOf(Throwable failure) {
		try {
			return failure.getStackTrace();
		}
		catch (RuntimeException | LinkageError | StackOverflowError ex) {
			return new StackTraceElement[0];
		}
	}

	/**
	 * The stack trace, like {@link Throwable#printStackTrace()} prints it, but with every
	 * exception message cut to {@code maxMessageLength}: a huge message must not leave
	 * the frames out of the header.
	 */
	private static String stackTraceOf(Throwable failure, int maxMessageLength) {
		StringBuilder trace = new StringBuilder();
		Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
		String prefix = "";
		for (Throwable current = failure; current != null && seen.add(current); current = causeOf(current)) {
			trace.append(prefix).append(current.getClass().getName());
			String message = messageOf(current, true);
			if (message != null) {
				trace.append(": ").append(truncate(message, maxMessageLength));
			}
			trace.append('\n');
			for (StackTraceElement element : framesOf(current)) {
				trace.append("\tat ").append(element).append('\n');
			}
			prefix = "Caused by: ";
		}
		return trace.toString();
	}

	/**
	 * Cut text to at most {@code max} characters, marking the cut, without splitting a
	 * surrogate pair.
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
