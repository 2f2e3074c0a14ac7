package io.github.tieredretry.parkinglot;

import java.time.Instant;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.jspecify.annotations.Nullable;

/**
 * Parked messages that failed the same way: same origin queue, parked reason, exception
 * class and error text once numbers and ids are normalised away.
 *
 * @param id the group's id, to filter on ({@code group=...})
 * @param originQueue the queue the messages failed on
 * @param parkedReason why they were parked
 * @param exception the listener's exception class
 * @param errorPattern the error text with numbers and ids replaced by {@code #}
 * @param count parked messages of the group (among those scanned)
 * @param firstParkedAt when the oldest was parked ({@code null} when none has a parked
 * time)
 * @param lastParkedAt when the newest was parked
 * @param sampleError the error text of the group's oldest message
 * @param sampleMessageId the message id of the group's oldest message
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record FailureGroup(String id, @Nullable String originQueue, String parkedReason, @Nullable String exception,
		String errorPattern, long count, @Nullable Instant firstParkedAt, @Nullable Instant lastParkedAt,
		@Nullable String sampleError, @Nullable String sampleMessageId) {

}
