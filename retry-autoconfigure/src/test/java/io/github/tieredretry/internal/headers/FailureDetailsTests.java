package io.github.tieredretry.internal.headers;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link FailureDetails} and {@link FailureHeaderSettings}.
 */
class FailureDetailsTests {

	private static final String SMILE = "\uD83D\uDE00";

	@Test
	void shortMessageIsKeptWithTheExceptionClass() {
		FailureDetails details = FailureDetails.of(new IllegalStateException("payment declined"), 1000, -1);
		assertThat(details.exceptionClass()).isEqualTo("java.lang.IllegalStateException");
		assertThat(details.error()).isEqualTo("payment declined");
		assertThat(details.stackTrace()).isNull();
	}

	@Test
	void nullMessageBecomesEmpty() {
		FailureDetails details = FailureDetails.of(new IllegalStateException(), 1000, -1);
		assertThat(details.error()).isEmpty();
	}

	@Test
	void messageOfExactlyTheMaximumLengthIsKept() {
		String message = "x".repeat(100);
		assertThat(FailureDetails.of(new IllegalStateException(message), 100, -1).error()).isEqualTo(message);
	}

	@Test
	void longMessageIsCutToTheMaximumLengthWithATruncationMark() {
		String error = FailureDetails.of(new IllegalStateException("x".repeat(101)), 100, -1).error();
		assertThat(error).hasSize(100).endsWith("...[truncated]").startsWith("xxxxx");
	}

	@Test
	void megabyteMessageIsCutToTheMaximumLength() {
		String message = "y".repeat(1024 * 1024);
		String error = FailureDetails.of(new IllegalStateException(message), 1000, -1).error();
		assertThat(error).hasSize(1000).endsWith(FailureDetails.TRUNCATED);
	}

	@Test
	void megabyteMessageWithStackTraceKeepsBothBounded() {
		String message = "y".repeat(1024 * 1024);
		FailureDetails details = FailureDetails.of(new IllegalStateException(message), 1000, 8000);
		assertThat(details.error()).hasSize(1000);
		assertThat(details.stackTrace()).hasSize(8000).endsWith(FailureDetails.TRUNCATED);
	}

	@Test
	void cutNeverSplitsASurrogatePair() {
		// 5 chars of prefix + 14 of the mark: cut at 19 - 14 = 5 would split the pair at
		// index 4-5.
		String text = "abcd" + SMILE + "efghijklmnopqrstuvwxyz";
		String cut = FailureDetails.truncate(text, 5 + FailureDetails.TRUNCATED.length());
		assertThat(cut).isEqualTo("abcd" + FailureDetails.TRUNCATED);
		assertThat(isWellFormed(cut)).isTrue();
	}

	@Test
	void cutAfterACompleteSurrogatePairKeepsThePair() {
		String text = "abc" + SMILE + "efghijklmnopqrstuvwxyz";
		String cut = FailureDetails.truncate(text, 5 + FailureDetails.TRUNCATED.length());
		assertThat(cut).isEqualTo("abc" + SMILE + FailureDetails.TRUNCATED);
	}

	@Test
	void textOfSurrogatePairsIsCutIntoWellFormedTextAtEveryLength() {
		String text = SMILE.repeat(50);
		for (int max = 0; max <= text.length(); max++) {
			String cut = FailureDetails.truncate(text, max);
			assertThat(cut.length()).as("length at max %d", max).isLessThanOrEqualTo(max);
			assertThat(isWellFormed(cut)).as("well-formed at max %d", max).isTrue();
		}
	}

	@Test
	void maximumShorterThanTheMarkCutsWithoutMark() {
		assertThat(FailureDetails.truncate("abcdefghijklmnopqrstuvwxyz", 5)).isEqualTo("abcde");
		assertThat(FailureDetails.truncate("abcd" + SMILE + "xyz", 5)).isEqualTo("abcd");
	}

	@Test
	void maximumOfZeroLeavesNothing() {
		assertThat(FailureDetails.of(new IllegalStateException("boom"), 0, -1).error()).isEmpty();
		assertThat(FailureDetails.truncate(SMILE, 1)).isEmpty();
	}

	@Test
	void negativeStackTraceLengthLeavesTheStackTraceOut() {
		assertThat(FailureDetails.of(new IllegalStateException("boom"), 100, -1).stackTrace()).isNull();
	}

	@Test
	void stackTraceIncludesFramesAndCauses() {
		IllegalStateException failure = new IllegalStateException("outer", new IOException("disk on fire"));
		String stackTrace = FailureDetails.of(failure, 100, 100_000).stackTrace();
		assertThat(stackTrace).startsWith("java.lang.IllegalStateException: outer")
			.contains("\tat " + FailureDetailsTests.class.getName())
			.contains("Caused by: java.io.IOException: disk on fire");
	}

	@Test
	void stackTraceIsCutToItsMaximumLength() {
		String stackTrace = FailureDetails.of(new IllegalStateException("boom"), 100, 200).stackTrace();
		assertThat(stackTrace).hasSize(200).endsWith(FailureDetails.TRUNCATED);
	}

	@Test
	void settingsWithoutStackTraceLeaveItOut() {
		FailureHeaderSettings settings = new FailureHeaderSettings(false, 10, 8000);
		FailureDetails details = settings.describe(new IllegalStateException("x".repeat(50)));
		assertThat(details.stackTrace()).isNull();
		assertThat(details.error()).hasSize(10);
	}

	@Test
	void settingsWithStackTraceIncludeItCut() {
		FailureHeaderSettings settings = new FailureHeaderSettings(true, 1000, 300);
		FailureDetails details = settings.describe(new IllegalStateException("boom"));
		assertThat(details.stackTrace()).hasSize(300).startsWith("java.lang.IllegalStateException: boom");
	}

	private static boolean isWellFormed(String text) {
		return new String(text.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8).equals(text);
	}

}
