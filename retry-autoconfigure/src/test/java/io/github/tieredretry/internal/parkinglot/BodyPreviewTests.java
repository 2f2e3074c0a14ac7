package io.github.tieredretry.internal.parkinglot;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link BodyPreview}.
 */
class BodyPreviewTests {

	@Test
	void shortTextIsShownAsItIs() {
		assertThat(BodyPreview.of(utf8("{\"order\": 42}\n"), null, 20)).isEqualTo("{\"order\": 42}\n");
	}

	@Test
	void longTextIsCutAndMarked() {
		assertThat(BodyPreview.of(utf8("x".repeat(1000)), null, 10)).isEqualTo("xxxxxxxxxx...");
	}

	@Test
	void textIsCutWithoutSplittingACharacter() {
		String emoji = "\uD83D\uDE00";
		assertThat(BodyPreview.of(utf8("ab" + emoji + "cd"), null, 3)).isEqualTo("ab...");
		assertThat(BodyPreview.of(utf8("é".repeat(10)), null, 4)).isEqualTo("éééé...");
	}

	@Test
	void onlyABoundedPrefixOfAHugeBodyIsDecoded() {
		byte[] body = new byte[5_000_000];
		java.util.Arrays.fill(body, (byte) 'a');
		body[body.length - 1] = (byte) 0xff;
		assertThat(BodyPreview.of(body, null, 5)).isEqualTo("aaaaa...");
	}

	@Test
	void bytesThatAreNotTextAreDescribed() {
		assertThat(BodyPreview.of(new byte[] { (byte) 0xc3, (byte) 0x28, 1, 2 }, null, 20))
			.isEqualTo("(binary, 4 bytes)");
		assertThat(BodyPreview.of(new byte[] { 'a', 0, 'b' }, null, 20)).isEqualTo("(binary, 3 bytes)");
	}

	@Test
	void compressedBodiesAreDescribed() {
		assertThat(BodyPreview.of(utf8("looks like text"), "gzip", 20)).isEqualTo("(binary, 15 bytes)");
	}

	@Test
	void theContentEncodingNamesTheCharset() {
		assertThat(BodyPreview.of("caf\u00e9".getBytes(StandardCharsets.ISO_8859_1), "ISO-8859-1", 20))
			.isEqualTo("caf\u00e9");
		assertThat(BodyPreview.of(utf8("plain"), "identity", 20)).isEqualTo("plain");
	}

	@Test
	void anEmptyBodyHasAnEmptyPreview() {
		assertThat(BodyPreview.of(new byte[0], null, 20)).isEmpty();
	}

	private static byte[] utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
