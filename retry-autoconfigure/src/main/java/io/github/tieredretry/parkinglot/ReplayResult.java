package io.github.tieredretry.parkinglot;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.jspecify.annotations.Nullable;

/**
 * What a replay did.
 *
 * @param moved messages published to their origin queue (confirmed) and removed from the
 * parking lot
 * @param stayed matching messages that could not be moved and are still parked
 * @param stayedByReason how many stayed for each {@link StayReason#value() reason}
 * @param stayedMessages the first messages that stayed, with their reason
 * @param scanned parked messages looked at
 */
public record ReplayResult(int moved, int stayed, Map<String, Integer> stayedByReason,
		List<StayedMessage> stayedMessages, int scanned) {

	public ReplayResult {
		stayedByReason = Collections.unmodifiableMap(new TreeMap<>(stayedByReason));
		stayedMessages = List.copyOf(stayedMessages);
	}

	/**
	 * A parked message that a replay could not move.
	 *
	 * @param messageId its {@code message-id}, if it has one
	 * @param originQueue its origin queue, if it names one
	 * @param reason why it stayed
	 * @param detail what the broker said, if anything
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	public record StayedMessage(@Nullable String messageId, @Nullable String originQueue, StayReason reason,
			@Nullable String detail) {
	}

}
