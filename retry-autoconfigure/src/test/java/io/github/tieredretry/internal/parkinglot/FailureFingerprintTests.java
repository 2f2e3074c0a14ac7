package io.github.tieredretry.internal.parkinglot;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link FailureFingerprint}: what varies between messages of one failure is
 * normalised away, what tells failures apart is kept.
 */
class FailureFingerprintTests {

	@Test
	void numbersAmountsAndIdsAreNormalisedAway() {
		assertThat(FailureFingerprint.errorPattern("Payment provider timed out charging 250.00 (attempt 4)"))
			.isEqualTo("Payment provider timed out charging # (attempt #)");
		assertThat(FailureFingerprint.errorPattern("order o38150-15 not found in 'X-99'"))
			.isEqualTo("order # not found in '#'");
		assertThat(FailureFingerprint
			.errorPattern("no customer 3f2b1c9e-8d7a-4e6f-9a0b-1c2d3e4f5a6b at 2026-11-22T06:07:18.326Z"))
			.isEqualTo("no customer # at #");
	}

	@Test
	void wordsWithoutDigitsAndWhitespaceDifferencesAreKeptOrCollapsed() {
		assertThat(FailureFingerprint.errorPattern("  customer   fraud-eve\nflagged "))
			.isEqualTo("customer fraud-eve flagged");
		assertThat(FailureFingerprint.errorPattern(null)).isEmpty();
	}

	@Test
	void messagesThatDifferOnlyInNumbersShareAGroup() {
		String first = FailureFingerprint.of("orders", "exhausted", "java.io.IOException",
				"order 1042 timed out after 30s");
		String second = FailureFingerprint.of("orders", "exhausted", "java.io.IOException",
				"order 977 timed out after 5s");

		assertThat(first).isEqualTo(second).hasSize(12).matches("[0-9a-f]{12}");
	}

	@Test
	void queueReasonExceptionAndErrorTextEachTellGroupsApart() {
		String group = FailureFingerprint.of("orders", "exhausted", "java.io.IOException", "timed out");

		assertThat(FailureFingerprint.of("payments", "exhausted", "java.io.IOException", "timed out"))
			.isNotEqualTo(group);
		assertThat(FailureFingerprint.of("orders", "timeout", "java.io.IOException", "timed out")).isNotEqualTo(group);
		assertThat(FailureFingerprint.of("orders", "exhausted", "java.lang.IllegalStateException", "timed out"))
			.isNotEqualTo(group);
		assertThat(FailureFingerprint.of("orders", "exhausted", "java.io.IOException", "refused")).isNotEqualTo(group);
		assertThat(FailureFingerprint.of(null, "unroutable", null, null)).isNotEqualTo(group);
	}

}
