package io.github.tieredretry.policy;

import org.jspecify.annotations.Nullable;

/**
 * Why a message ended in the parking lot; written to header {@code retry-parked-reason}.
 */
public enum ParkedReason {

	/** The listener still failed after the policy's last retry. */
	EXHAUSTED("exhausted"),

	/**
	 * The failure can never succeed: {@code no-retry-on}, not in {@code retry-on}, or an
	 * unconvertible payload.
	 */
	NOT_RETRYABLE("not-retryable"),

	/**
	 * The next retry would fall due later than the first failure plus the policy's
	 * timeout.
	 */
	TIMEOUT("timeout"),

	/**
	 * A retry left its tier but its work queue no longer existed. The broker routes such
	 * messages to the parking lot itself, so they carry no {@code retry-parked-reason}
	 * header; readers infer this reason.
	 */
	UNROUTABLE("unroutable");

	private final String value;

	ParkedReason(String value) {
		this.value = value;
	}

	/**
	 * The header and tag value, e.g. {@code not-retryable}.
	 * @return the value
	 */
	public String value() {
		return this.value;
	}

	/**
	 * Parse a header value.
	 * @param value the header value
	 * @return the reason, or {@code null} when the value is not one of ours
	 */
	public static @Nullable ParkedReason fromValue(@Nullable Object value) {
		if (value != null) {
			String text = value.toString();
			for (ParkedReason reason : values()) {
				if (reason.value.equals(text)) {
					return reason;
				}
			}
		}
		return null;
	}

}
