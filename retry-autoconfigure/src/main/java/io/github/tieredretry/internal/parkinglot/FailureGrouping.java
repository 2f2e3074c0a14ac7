package io.github.tieredretry.internal.parkinglot;

import java.time.Instant;

import io.github.tieredretry.parkinglot.FailureGroup;
import io.github.tieredretry.parkinglot.ParkedMessage;
import org.jspecify.annotations.Nullable;

/**
 * Builds the {@link FailureGroup failure groups} of a scan, one parked message at a time.
 */
final class FailureGrouping {

	private FailureGrouping() {
	}

	/**
	 * A group of one message.
	 * @param message the message
	 * @return the group
	 */
	static FailureGroup of(ParkedMessage message) {
		return new FailureGroup(message.group(), message.originQueue(), message.parkedReason(), message.exception(),
				FailureFingerprint.errorPattern(message.error()), 1, message.parkedAt(), message.parkedAt(),
				message.error(), message.messageId());
	}

	/**
	 * A group with one more message.
	 * @param group the group
	 * @param message the message
	 * @return the group counting it
	 */
	static FailureGroup with(FailureGroup group, ParkedMessage message) {
		Instant parkedAt = message.parkedAt();
		return new FailureGroup(group.id(), group.originQueue(), group.parkedReason(), group.exception(),
				group.errorPattern(), group.count() + 1, earlier(group.firstParkedAt(), parkedAt),
				later(group.lastParkedAt(), parkedAt), group.sampleError(), group.sampleMessageId());
	}

	private static @Nullable Instant earlier(@Nullable Instant a, @Nullable Instant b) {
		if (a == null) {
			return b;
		}
		return (b == null || a.isBefore(b)) ? a : b;
	}

	private static @Nullable Instant later(@Nullable Instant a, @Nullable Instant b) {
		if (a == null) {
			return b;
		}
		return (b == null || a.isAfter(b)) ? a : b;
	}

}
