package io.github.tieredretry.observation;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * The trace context a message carries in its headers, in the formats Spring Boot
 * propagates: W3C ({@code traceparent}), B3 single ({@code b3}) and B3 multi
 * ({@code X-B3-*}). Plain Java, no tracer: a parked message's context is read from its
 * headers without starting a span.
 */
final class TraceHeaders {

	/**
	 * Headers that say which trace and span a message belongs to (baggage is the
	 * application's, and kept).
	 */
	private static final List<String> TRACE_IDENTITY = List.of("traceparent", "tracestate", "b3", "x-b3-traceid",
			"x-b3-spanid", "x-b3-parentspanid", "x-b3-sampled", "x-b3-flags");

	private static final Pattern TRACEPARENT = Pattern
		.compile("[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})");

	private static final Pattern TRACE_ID = Pattern.compile("[0-9a-f]{16}|[0-9a-f]{32}");

	private static final Pattern SPAN_ID = Pattern.compile("[0-9a-f]{16}");

	private TraceHeaders() {
	}

	/**
	 * The ids of a trace context found in headers.
	 *
	 * @param traceId the trace id, 32 lower-case hex digits
	 * @param spanId the span id, 16 lower-case hex digits
	 * @param sampled whether it was sampled, if the headers say
	 */
	record TraceIds(String traceId, String spanId, @Nullable Boolean sampled) {
	}

	/**
	 * Whether a header says which trace and span a message belongs to.
	 * @param header a header name
	 * @return whether it is a trace context header, in any of the formats
	 */
	static boolean isTraceIdentity(String header) {
		return TRACE_IDENTITY.contains(header.toLowerCase(Locale.ROOT));
	}

	/**
	 * Remove the trace context headers a tracer did not just write. A message keeps the
	 * headers it arrived with; a stale one of another format than the tracer writes would
	 * be read first by a receiver that accepts several formats, and the next attempt
	 * would join the producer's span instead of the forward's.
	 * @param headers the headers to publish, changed in place
	 * @param written the headers the tracer wrote
	 */
	static void removeStale(Map<String, Object> headers, Set<String> written) {
		headers.keySet().removeIf((header) -> isTraceIdentity(header) && !written.contains(header));
	}

	/**
	 * The trace context in headers: W3C first, then B3 single, then B3 multi.
	 * @param headers the headers, as received (values may be strings, AMQP long strings
	 * or bytes)
	 * @return its ids, or {@code null} when no valid trace context is there
	 */
	static @Nullable TraceIds find(@Nullable Map<String, ?> headers) {
		if (headers == null || headers.isEmpty()) {
			return null;
		}
		TraceIds ids = fromTraceparent(text(headers, "traceparent"));
		if (ids == null) {
			ids = fromB3(text(headers, "b3"));
		}
		if (ids == null) {
			ids = fromB3Multi(headers);
		}
		return ids;
	}

	private static @Nullable TraceIds fromTraceparent(@Nullable String value) {
		if (value == null) {
			return null;
		}
		Matcher matcher = TRACEPARENT.matcher(value.strip());
		if (!matcher.matches() || value.startsWith("ff")) {
			return null;
		}
		boolean sampled = (Integer.parseInt(matcher.group(3), 16) & 1) == 1;
		return valid(matcher.group(1), matcher.group(2), sampled);
	}

	// {@code traceid-spanid[-sampling[-parentspanid]]}; a lone sampling decision carries
	// no context.
	private static @Nullable TraceIds fromB3(@Nullable String value) {
		if (value == null) {
			return null;
		}
		String[] parts = value.strip().split("-");
		if (parts.length < 2) {
			return null;
		}
		return valid(parts[0], parts[1], (parts.length > 2) ? sampled(parts[2]) : null);
	}

	private static @Nullable TraceIds fromB3Multi(Map<String, ?> headers) {
		String traceId = text(headers, "x-b3-traceid");
		String spanId = text(headers, "x-b3-spanid");
		if (traceId == null || spanId == null) {
			return null;
		}
		Boolean sampled = "1".equals(text(headers, "x-b3-flags")) ? Boolean.TRUE
				: sampled(text(headers, "x-b3-sampled"));
		return valid(traceId.strip(), spanId.strip(), sampled);
	}

	private static @Nullable Boolean sampled(@Nullable String value) {
		if (value == null) {
			return null;
		}
		return switch (value.strip()) {
			case "1", "d", "true" -> Boolean.TRUE;
			case "0", "false" -> Boolean.FALSE;
			default -> null;
		};
	}

	private static @Nullable TraceIds valid(String traceId, String spanId, @Nullable Boolean sampled) {
		String trace = traceId.toLowerCase(Locale.ROOT);
		String span = spanId.toLowerCase(Locale.ROOT);
		if (!TRACE_ID.matcher(trace).matches() || !SPAN_ID.matcher(span).matches() || isZero(trace) || isZero(span)) {
			return null;
		}
		// A 64-bit B3 trace id is the lower half of a 128-bit one.
		return new TraceIds((trace.length() == 16) ? "0000000000000000" + trace : trace, span, sampled);
	}

	private static boolean isZero(String hex) {
		return hex.chars().allMatch((digit) -> digit == '0');
	}

	// A header's value as text; header names are matched ignoring case (B3 multi is
	// written both ways).
	private static @Nullable String text(Map<String, ?> headers, String name) {
		Object value = headers.get(name);
		if (value == null) {
			for (Map.Entry<String, ?> header : headers.entrySet()) {
				if (header.getKey().equalsIgnoreCase(name)) {
					value = header.getValue();
					break;
				}
			}
		}
		if (value instanceof byte[] bytes) {
			return new String(bytes, StandardCharsets.UTF_8);
		}
		// A LongString (how the AMQP client delivers text headers) prints its text.
		return (value != null) ? value.toString() : null;
	}

}
