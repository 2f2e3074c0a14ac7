package io.github.tieredretry.autoconfigure;

import org.jspecify.annotations.Nullable;

/**
 * A {@code retry.*} key that {@link RetryProperties} does not have, most likely a
 * misspelt one: binding would ignore it.
 */
class UnknownRetryPropertyException extends RuntimeException {

	private final String key;

	private final @Nullable String origin;

	private final String closestKnownKey;

	UnknownRetryPropertyException(String key, @Nullable String origin, String closestKnownKey) {
		super("Unknown property '" + key + "'" + ((origin != null) ? " (" + origin + ")" : "")
				+ ": tiered retries have no such key, so it would be ignored. The closest known key is '"
				+ closestKnownKey + "'.");
		this.key = key;
		this.origin = origin;
		this.closestKnownKey = closestKnownKey;
	}

	String getKey() {
		return this.key;
	}

	@Nullable String getOrigin() {
		return this.origin;
	}

	String getClosestKnownKey() {
		return this.closestKnownKey;
	}

}
