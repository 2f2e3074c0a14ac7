package io.github.tieredretry.reliability.consumer;

import org.jspecify.annotations.Nullable;

/**
 * What the listener does with one message of the fault run, carried in header
 * {@value #HEADER}: {@code succeed}, {@code fail:N} (fail the first N deliveries, then
 * succeed), {@code never} (always fail) or {@code not-retryable} (fail with an exception
 * listed in {@code noRetryOn}).
 * <p>
 * The listener decides from this header and the message's {@code retry-count} alone, so a
 * consumer that is killed and restarted behaves exactly like one that was not.
 *
 * @param behaviour what happens
 * @param failures for {@link Behaviour#FAIL_THEN_SUCCEED}, how many attempts fail
 */
public record FaultPlan(Behaviour behaviour, int failures) {

	/** The header that carries the plan. */
	public static final String HEADER = "fault-plan";

	/** What the listener does with a message. */
	public enum Behaviour {

		/** Processed at the first attempt. */
		SUCCEED,

		/** Fails a few times (retried through the tiers), then processed. */
		FAIL_THEN_SUCCEED,

		/** Always fails: parked as {@code exhausted} after the last retry. */
		NEVER_SUCCEED,

		/**
		 * Fails with a non-retryable exception: parked as {@code not-retryable} at once.
		 */
		NOT_RETRYABLE

	}

	public static FaultPlan succeed() {
		return new FaultPlan(Behaviour.SUCCEED, 0);
	}

	public static FaultPlan failThenSucceed(int failures) {
		return new FaultPlan(Behaviour.FAIL_THEN_SUCCEED, failures);
	}

	public static FaultPlan neverSucceed() {
		return new FaultPlan(Behaviour.NEVER_SUCCEED, 0);
	}

	public static FaultPlan notRetryable() {
		return new FaultPlan(Behaviour.NOT_RETRYABLE, 0);
	}

	/**
	 * Whether the message must end up processed (rather than parked).
	 * @return whether the listener eventually succeeds
	 */
	public boolean endsProcessed() {
		return this.behaviour == Behaviour.SUCCEED || this.behaviour == Behaviour.FAIL_THEN_SUCCEED;
	}

	/**
	 * The {@code retry-parked-reason} a parked message of this plan must carry.
	 * @return the reason, or {@code null} when the message must not be parked at all
	 */
	public @Nullable String expectedParkedReason() {
		return switch (this.behaviour) {
			case NEVER_SUCCEED -> "exhausted";
			case NOT_RETRYABLE -> "not-retryable";
			default -> null;
		};
	}

	/**
	 * The header value.
	 * @return e.g. {@code fail:2}
	 */
	public String headerValue() {
		return switch (this.behaviour) {
			case SUCCEED -> "succeed";
			case FAIL_THEN_SUCCEED -> "fail:" + this.failures;
			case NEVER_SUCCEED -> "never";
			case NOT_RETRYABLE -> "not-retryable";
		};
	}

	/**
	 * Parse a header value.
	 * @param value the header value
	 * @return the plan
	 * @throws IllegalArgumentException for anything else
	 */
	public static FaultPlan parse(@Nullable Object value) {
		String text = String.valueOf(value);
		if (text.startsWith("fail:")) {
			return failThenSucceed(Integer.parseInt(text.substring("fail:".length())));
		}
		return switch (text) {
			case "succeed" -> succeed();
			case "never" -> neverSucceed();
			case "not-retryable" -> notRetryable();
			default -> throw new IllegalArgumentException("Not a fault plan: '" + text + "'");
		};
	}

}
