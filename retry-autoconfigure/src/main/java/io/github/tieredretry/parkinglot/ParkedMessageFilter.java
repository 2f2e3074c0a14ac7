package io.github.tieredretry.parkinglot;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.stream.Collectors;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.github.tieredretry.policy.ParkedReason;
import org.jspecify.annotations.Nullable;

/**
 * Which parked messages an operation applies to. Every criterion that is set must match;
 * a filter with no criterion matches every message.
 *
 * @param queue the origin queue (header {@code retry-queue}) the message failed on
 * @param group the failure group (see {@link FailureGroup#id()})
 * @param exception the listener's exception class: its fully qualified or its simple name
 * @param reason the parked reason: {@code exhausted}, {@code not-retryable},
 * {@code timeout} or {@code unroutable}
 * @param parkedAfter only messages parked at or after this time (messages without a
 * parked time, i.e. {@code unroutable} ones, do not match)
 * @param parkedBefore only messages parked before this time
 * @param messageId the message's {@code message-id}
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ParkedMessageFilter(@Nullable String queue, @Nullable String group, @Nullable String exception,
		@Nullable String reason, @Nullable Instant parkedAfter, @Nullable Instant parkedBefore,
		@Nullable String messageId) {

	/** The filter that matches every parked message. */
	public static final ParkedMessageFilter ALL = new ParkedMessageFilter(null, null, null, null, null, null, null);

	/**
	 * Create a filter, checking its criteria.
	 * @throws ParkingLotRequestException when the reason is unknown or the time range is
	 * empty
	 */
	public ParkedMessageFilter {
		queue = blankToNull(queue);
		group = blankToNull(group);
		exception = blankToNull(exception);
		reason = blankToNull(reason);
		messageId = blankToNull(messageId);
		if (reason != null && ParkedReason.fromValue(reason) == null) {
			throw new ParkingLotRequestException("reason must be one of "
					+ Arrays.stream(ParkedReason.values()).map(ParkedReason::value).collect(Collectors.joining(", "))
					+ " but was '" + reason + "'");
		}
		if (parkedAfter != null && parkedBefore != null && !parkedAfter.isBefore(parkedBefore)) {
			throw new ParkingLotRequestException(
					"parkedAfter (" + parkedAfter + ") must be earlier than parkedBefore (" + parkedBefore + ")");
		}
	}

	/**
	 * The filter for the messages that failed on one queue.
	 * @param queue the origin queue, or {@code null} for every message
	 * @return the filter
	 */
	public static ParkedMessageFilter forQueue(@Nullable String queue) {
		return new ParkedMessageFilter(queue, null, null, null, null, null, null);
	}

	/**
	 * A filter from request parameters as text, as an HTTP request or a JMX client sends
	 * them.
	 * @param queue the origin queue
	 * @param group the failure group
	 * @param exception the exception class
	 * @param reason the parked reason
	 * @param parkedAfter an ISO-8601 instant such as {@code 2026-11-22T06:00:00Z}
	 * @param parkedBefore an ISO-8601 instant
	 * @param messageId the message id
	 * @return the filter
	 * @throws ParkingLotRequestException when a value is invalid
	 */
	public static ParkedMessageFilter parse(@Nullable String queue, @Nullable String group, @Nullable String exception,
			@Nullable String reason, @Nullable String parkedAfter, @Nullable String parkedBefore,
			@Nullable String messageId) {
		return new ParkedMessageFilter(queue, group, exception, reason, instant("parkedAfter", parkedAfter),
				instant("parkedBefore", parkedBefore), messageId);
	}

	/**
	 * Whether the filter has no criterion and matches every message.
	 * @return whether it matches everything
	 */
	public boolean matchesAll() {
		return equals(ALL);
	}

	/**
	 * Whether a parked message matches every criterion.
	 * @param message the message
	 * @return whether it matches
	 */
	public boolean matches(ParkedMessage message) {
		return matches(this.queue, message.originQueue()) && matches(this.group, message.group())
				&& matchesException(message.exception()) && matches(this.reason, message.parkedReason())
				&& matches(this.messageId, message.messageId()) && matchesParkedAt(message.parkedAt());
	}

	private boolean matchesException(@Nullable String actual) {
		return this.exception == null || (actual != null && (actual.equals(this.exception)
				|| actual.endsWith("." + this.exception) || actual.endsWith("$" + this.exception)));
	}

	private boolean matchesParkedAt(@Nullable Instant parkedAt) {
		if (this.parkedAfter == null && this.parkedBefore == null) {
			return true;
		}
		return parkedAt != null && (this.parkedAfter == null || !parkedAt.isBefore(this.parkedAfter))
				&& (this.parkedBefore == null || parkedAt.isBefore(this.parkedBefore));
	}

	private static boolean matches(@Nullable String expected, @Nullable String actual) {
		return expected == null || expected.equals(actual);
	}

	@Override
	public String toString() {
		if (matchesAll()) {
			return "all";
		}
		StringBuilder text = new StringBuilder();
		append(text, "queue", this.queue);
		append(text, "group", this.group);
		append(text, "exception", this.exception);
		append(text, "reason", this.reason);
		append(text, "parkedAfter", this.parkedAfter);
		append(text, "parkedBefore", this.parkedBefore);
		append(text, "messageId", this.messageId);
		return text.toString();
	}

	private static void append(StringBuilder text, String name, @Nullable Object value) {
		if (value != null) {
			text.append(text.isEmpty() ? "" : ", ").append(name).append("='").append(value).append("'");
		}
	}

	private static @Nullable Instant instant(String name, @Nullable String value) {
		String text = blankToNull(value);
		if (text == null) {
			return null;
		}
		try {
			return Instant.parse(text);
		}
		catch (DateTimeParseException ex) {
			throw new ParkingLotRequestException(
					name + " must be an ISO-8601 instant such as 2026-11-22T06:00:00Z but was '" + text + "'");
		}
	}

	private static @Nullable String blankToNull(@Nullable String value) {
		return (value != null && !value.isBlank()) ? value.trim() : null;
	}

}
