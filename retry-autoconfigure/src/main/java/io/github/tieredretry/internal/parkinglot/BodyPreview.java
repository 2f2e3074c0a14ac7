package io.github.tieredretry.internal.parkinglot;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.Charset;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.IllegalCharsetNameException;
import java.nio.charset.StandardCharsets;
import java.nio.charset.UnsupportedCharsetException;

import org.jspecify.annotations.Nullable;

/**
 * A short, safe text preview of a message body: text is cut to a maximum length, anything
 * that does not decode as text is described instead of shown, so that a peek never
 * returns megabytes or garbage.
 */
final class BodyPreview {

	static final String CUT_MARK = "...";

	private BodyPreview() {
	}

	/**
	 * Preview a body.
	 * @param body the body
	 * @param contentEncoding the message's content encoding: Spring AMQP puts the text's
	 * charset there
	 * @param maxLength the longest preview, in characters
	 * @return the preview
	 */
	static String of(byte[] body, @Nullable String contentEncoding, int maxLength) {
		if (body.length == 0) {
			return "";
		}
		Charset charset = charsetOf(contentEncoding);
		if (charset == null) {
			return binary(body);
		}
		// Decode a bounded prefix only: no character takes more than 4 bytes in the
		// charsets that matter.
		int bytes = (int) Math.min(body.length, (maxLength + 1L) * 4);
		boolean wholeBody = bytes == body.length;
		CharsetDecoder decoder = charset.newDecoder()
			.onMalformedInput(CodingErrorAction.REPORT)
			.onUnmappableCharacter(CodingErrorAction.REPORT);
		CharBuffer text = CharBuffer.allocate(bytes * 2 + 1);
		CoderResult result = decoder.decode(ByteBuffer.wrap(body, 0, bytes), text, wholeBody);
		if (result.isError() || (wholeBody && decoder.flush(text).isError())) {
			return binary(body);
		}
		String decoded = text.flip().toString();
		if (!isPrintable(decoded)) {
			return binary(body);
		}
		if (decoded.length() <= maxLength && wholeBody) {
			return decoded;
		}
		int end = Math.min(decoded.length(), maxLength);
		if (end > 0 && Character.isHighSurrogate(decoded.charAt(end - 1))) {
			end--;
		}
		return decoded.substring(0, end) + CUT_MARK;
	}

	private static @Nullable Charset charsetOf(@Nullable String contentEncoding) {
		if (contentEncoding == null || contentEncoding.isBlank() || contentEncoding.trim().equals("identity")) {
			return StandardCharsets.UTF_8;
		}
		try {
			return Charset.forName(contentEncoding.trim());
		}
		catch (IllegalCharsetNameException | UnsupportedCharsetException ex) {
			// gzip, deflate and the like: compressed bytes are not text.
			return null;
		}
	}

	private static boolean isPrintable(String text) {
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if (Character.isISOControl(c) && c != '\n' && c != '\r' && c != '\t') {
				return false;
			}
		}
		return true;
	}

	private static String binary(byte[] body) {
		return "(binary, " + body.length + " bytes)";
	}

}
