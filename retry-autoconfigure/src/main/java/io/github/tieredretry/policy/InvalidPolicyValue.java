package io.github.tieredretry.policy;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * A retry policy value that no policy accepts, with what would be accepted. Whoever
 * reports it knows where the value came from: a property, an annotation attribute, a
 * constructor argument.
 *
 * @param field the field, as in property names: {@code max-retries}, {@code delays},
 * {@code initial-interval}, {@code multiplier}, {@code max-interval}, {@code jitter},
 * {@code immediate-retries} or {@code timeout}
 * @param value the offending value; for {@code delays}, the offending delay
 * @param requirement what the field accepts, to follow "Use ", e.g.
 * {@code 0 or more retries (retries after
 * the first attempt)}
 */
public record InvalidPolicyValue(String field, @Nullable Object value, String requirement) {

	/**
	 * The value as the user wrote it: durations as {@code 10s}, not {@code PT10S}.
	 * @return the value's text
	 */
	public String valueText() {
		return (this.value instanceof Duration duration) ? DurationText.of(duration) : String.valueOf(this.value);
	}

	/**
	 * One sentence saying what to do instead.
	 * @return e.g. {@code Use 0 or more retries (retries after the first attempt).}
	 */
	public String fix() {
		return "Use " + this.requirement + ".";
	}

}
