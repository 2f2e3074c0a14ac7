package io.github.tieredretry.parkinglot;

import java.time.Instant;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.jspecify.annotations.Nullable;

/**
 * What a parked message says about itself, read without removing it from the parking lot.
 * Every text here comes from outside (producers, listeners' exceptions): show it as text,
 * never as markup.
 *
 * @param messageId its {@code message-id}, if it has one
 * @param originQueue the queue whose listener failed (header {@code retry-queue}), where
 * a replay sends it
 * @param retryCount retries made before it was parked
 * @param parkedReason why it was parked: {@code exhausted}, {@code not-retryable},
 * {@code timeout} or {@code unroutable}
 * @param exception class name of the listener's exception
 * @param error the exception's message (truncated when it was parked)
 * @param firstFailure when its first attempt failed
 * @param parkedAt when it was parked ({@code null} for {@code unroutable}: the broker
 * parked it)
 * @param replays how often it was replayed from the parking lot before
 * @param contentType its content type
 * @param bodySize its body's size in bytes
 * @param bodyPreview the start of its body as text, or a note saying it is binary
 * @param group the {@link FailureGroup failure group} it belongs to
 * @param stackTrace the failure's stack trace (header {@code retry-stack-trace}, written
 * only with {@code retry.headers.include-stack-trace=true})
 * @param headers its other headers as text, by name, each cut to 1,000 characters
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ParkedMessage(@Nullable String messageId, @Nullable String originQueue, long retryCount,
		String parkedReason, @Nullable String exception, @Nullable String error, @Nullable Instant firstFailure,
		@Nullable Instant parkedAt, long replays, @Nullable String contentType, int bodySize, String bodyPreview,
		String group, @Nullable String stackTrace, Map<String, String> headers) {

	public ParkedMessage {
		headers = Collections.unmodifiableMap(new TreeMap<>(headers));
	}

}
