package io.github.tieredretry.internal.forwarding;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.LongString;
import com.rabbitmq.client.impl.AMQContentHeader;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.headers.HeaderChanges;
import org.jspecify.annotations.Nullable;

/**
 * The AMQP properties of a forwarded message: exactly the received ones, except that the
 * message is persistent, has no {@code expiration} (the tier's TTL must rule; the
 * original value is kept in {@code retry-original-expiration}), carries the header edits
 * of this forward, and leaves behind the broker's counts of the delivery it came from
 * ({@code x-delivery-count}, {@code x-acquired-count}): a forwarded copy is a new message
 * to the broker, and a stale count copied into it would look like returns it never had.
 */
public final class ForwardedProperties {

	/** AMQP delivery mode 2. */
	private static final int PERSISTENT = 2;

	/**
	 * RabbitMQ's sender-selected distribution headers: extra routing keys for a publish.
	 */
	private static final String CC = "CC";

	private static final String BCC = "BCC";

	private ForwardedProperties() {
	}

	/**
	 * Build the properties to forward with.
	 * @param received the properties as received from the broker
	 * @param changes the header edits
	 * @return the properties to publish
	 */
	public static AMQP.BasicProperties of(AMQP.BasicProperties received, HeaderChanges changes) {
		Map<String, Object> headers = new LinkedHashMap<>();
		if (received.getHeaders() != null) {
			headers.putAll(received.getHeaders());
			headers.keySet().removeAll(RetryHeaders.BROKER_DELIVERY_COUNTS);
		}
		String expiration = received.getExpiration();
		if (expiration != null && !headers.containsKey(RetryHeaders.ORIGINAL_EXPIRATION)) {
			headers.put(RetryHeaders.ORIGINAL_EXPIRATION, expiration);
		}
		return received.builder().headers(changes.applyTo(headers)).expiration(null).deliveryMode(PERSISTENT).build();
	}

	/**
	 * The properties to publish: without extra routing keys, with a {@code user-id} the
	 * publishing user may send, fitted into one frame.
	 * @param properties the properties to publish
	 * @param publisherUser the user the publishing connection authenticates as
	 * @param bodySize the body's size in bytes
	 * @param frameMax the connection's negotiated {@code frame_max}, or 0 for no limit
	 * @return the properties, changed only where they would make the publish go wrong
	 */
	public static AMQP.BasicProperties publishable(AMQP.BasicProperties properties, String publisherUser, long bodySize,
			int frameMax) {
		return fitToFrame(withPublishableUserId(withoutExtraRoutingKeys(properties), publisherUser), bodySize,
				frameMax);
	}

	/**
	 * Drop the {@code CC} and {@code BCC} headers: the broker adds their routing keys to
	 * a publish (and dead-lettering keeps them), so a forwarded copy would also reach
	 * every queue they name - a parked copy, or a retry returned to another queue that
	 * already had the message. The original {@code CC} is kept in
	 * {@code retry-original-cc}.
	 * @param properties the properties to publish
	 * @return the same properties, or a copy without extra routing keys
	 */
	public static AMQP.BasicProperties withoutExtraRoutingKeys(AMQP.BasicProperties properties) {
		Map<String, Object> original = properties.getHeaders();
		if (original == null || (!original.containsKey(CC) && !original.containsKey(BCC))) {
			return properties;
		}
		Map<String, Object> headers = new LinkedHashMap<>(original);
		Object cc = headers.remove(CC);
		headers.remove(BCC);
		if (cc != null) {
			headers.putIfAbsent(RetryHeaders.ORIGINAL_CC, cc);
		}
		return properties.builder().headers(headers).build();
	}

	/**
	 * Make properties publishable by the given user. RabbitMQ validates {@code user-id}
	 * against the publishing connection's user and closes the channel on a mismatch, so a
	 * message published by another user could never be forwarded: its {@code user-id}
	 * moves to header {@code retry-original-user-id} instead.
	 * @param properties the properties to publish
	 * @param publisherUser the user the publishing connection authenticates as
	 * @return the same properties, or a copy without {@code user-id}
	 */
	public static AMQP.BasicProperties withPublishableUserId(AMQP.BasicProperties properties, String publisherUser) {
		String userId = properties.getUserId();
		if (userId == null || userId.equals(publisherUser)) {
			return properties;
		}
		Map<String, Object> headers = new LinkedHashMap<>();
		if (properties.getHeaders() != null) {
			headers.putAll(properties.getHeaders());
		}
		headers.putIfAbsent(RetryHeaders.ORIGINAL_USER_ID, userId);
		return properties.builder().userId(null).headers(headers).build();
	}

	/**
	 * Make sure the properties fit into one content-header frame: a message may arrive
	 * with headers close to {@code frame_max} (the broker accepted it), and the failure
	 * headers added on forwarding must not push it over, or the forward could never
	 * succeed. Drops {@code retry-stack-trace} first, then cuts {@code retry-error}; the
	 * application's own headers are never touched.
	 * @param properties the properties to publish
	 * @param bodySize the body's size in bytes
	 * @param frameMax the connection's negotiated {@code frame_max}, or 0 for no limit
	 * @return the properties, shortened if needed
	 */
	public static AMQP.BasicProperties fitToFrame(AMQP.BasicProperties properties, long bodySize, int frameMax) {
		if (frameMax <= 0 || properties.getHeaders() == null
				|| (roughSize(properties) <= frameMax / 2 || frameSize(properties, bodySize) <= frameMax)) {
			// Serialising the header only to measure it costs as much as publishing it:
			// measure only the rare header that may be near the limit.
			return properties;
		}
		Map<String, Object> headers = new LinkedHashMap<>(properties.getHeaders());
		headers.remove(RetryHeaders.STACK_TRACE);
		AMQP.BasicProperties fitted = properties.builder().headers(headers).build();
		int excess = frameSize(fitted, bodySize) - frameMax;
		Object error = headers.get(RetryHeaders.ERROR);
		if (excess > 0 && error != null) {
			byte[] bytes = error.toString().getBytes(StandardCharsets.UTF_8);
			// A multi-byte character cut in two decodes as U+FFFD (3 bytes): leave room
			// for it.
			int keep = Math.max(0, bytes.length - excess - 3);
			headers.put(RetryHeaders.ERROR, new String(bytes, 0, keep, StandardCharsets.UTF_8));
			fitted = properties.builder().headers(headers).build();
		}
		return fitted;
	}

	/**
	 * An upper bound of the content header's size, without serialising it: every
	 * character counted as 4 bytes (UTF-8 needs at most that), plus room for the field
	 * table's type tags and lengths.
	 * @param properties the properties
	 * @return the bound, in bytes
	 */
	static long roughSize(AMQP.BasicProperties properties) {
		long size = 256;
		for (String text : new String[] { properties.getContentType(), properties.getContentEncoding(),
				properties.getCorrelationId(), properties.getReplyTo(), properties.getExpiration(),
				properties.getMessageId(), properties.getType(), properties.getUserId(), properties.getAppId(),
				properties.getClusterId() }) {
			size += (text != null) ? 4L * text.length() : 0;
		}
		return size + roughSize(properties.getHeaders());
	}

	private static long roughSize(@Nullable Object value) {
		if (value instanceof Map<?, ?> map) {
			long size = 8;
			for (Map.Entry<?, ?> entry : map.entrySet()) {
				size += 16 + roughSize(entry.getKey()) + roughSize(entry.getValue());
			}
			return size;
		}
		if (value instanceof List<?> list) {
			long size = 8;
			for (Object element : list) {
				size += 16 + roughSize(element);
			}
			return size;
		}
		if (value instanceof byte[] bytes) {
			return 16 + bytes.length;
		}
		if (value instanceof LongString longString) {
			return 16 + longString.length();
		}
		if (value instanceof CharSequence text) {
			return 16 + 4L * text.length();
		}
		if (value == null || value instanceof Number || value instanceof Boolean || value instanceof Date) {
			// A field table holds them in at most 9 bytes (a decimal in 6): no text to
			// make of them.
			return 16;
		}
		return 16 + 4L * value.toString().length();
	}

	private static int frameSize(AMQP.BasicProperties properties, long bodySize) {
		try {
			return ((AMQContentHeader) properties).toFrame(0, bodySize).size();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
