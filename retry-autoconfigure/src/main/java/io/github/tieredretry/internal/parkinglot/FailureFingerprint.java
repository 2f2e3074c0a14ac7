package io.github.tieredretry.internal.parkinglot;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Which failure group a parked message belongs to: origin queue, parked reason, exception
 * class and error text with what varies from message to message (numbers, ids, amounts,
 * times) normalised away, so that "order 1042 not found" and "order 977 not found" are
 * one group.
 */
final class FailureFingerprint {

	/** What stands for a normalised number or id in an error pattern. */
	static final String PLACEHOLDER = "#";

	private static final Pattern UUID = Pattern
		.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

	/**
	 * A word with at least one digit: 42, 250.00, o38150-15, 0x1f, 2026-11-22T06:07:18Z,
	 * v2.
	 */
	private static final Pattern WORD_WITH_DIGIT = Pattern.compile("[\\w.:+-]*\\d[\\w.:+-]*",
			Pattern.UNICODE_CHARACTER_CLASS);

	private static final Pattern WHITESPACE = Pattern.compile("\\s+");

	private static final int ID_LENGTH = 12;

	private FailureFingerprint() {
	}

	/**
	 * The error text without what varies between messages of one failure.
	 * @param error the error text
	 * @return the pattern, empty for no error
	 */
	static String errorPattern(@Nullable String error) {
		if (error == null) {
			return "";
		}
		String pattern = UUID.matcher(error).replaceAll(PLACEHOLDER);
		pattern = WORD_WITH_DIGIT.matcher(pattern).replaceAll(PLACEHOLDER);
		return WHITESPACE.matcher(pattern).replaceAll(" ").trim();
	}

	/**
	 * The group id: a short hash of origin queue, reason, exception and error pattern.
	 * @param originQueue the origin queue
	 * @param parkedReason the parked reason
	 * @param exception the exception class
	 * @param error the error text
	 * @return the id, 12 hex digits
	 */
	static String of(@Nullable String originQueue, String parkedReason, @Nullable String exception,
			@Nullable String error) {
		String key = String.join("\u0000", String.valueOf(originQueue), parkedReason, String.valueOf(exception),
				errorPattern(error));
		try {
			byte[] hash = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
			return HexFormat.of().formatHex(hash).substring(0, ID_LENGTH);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("Every Java platform has SHA-256", ex);
		}
	}

}
