package io.github.tieredretry.internal.parkinglot;

import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.GetResponse;
import io.github.tieredretry.headers.RetryHeaders;
import io.github.tieredretry.internal.headers.HeaderChanges;
import io.github.tieredretry.internal.headers.RetryHeaderValues;
import io.github.tieredretry.parkinglot.ParkedMessage;
import org.jspecify.annotations.Nullable;

/**
 * Reads what a parked message says about itself from its AMQP properties and headers.
 */
final class ParkedMessages {

	/** The longest body preview, in characters. */
	static final int PREVIEW_LENGTH = 256;

	/** The longest header value shown, in characters. */
	static final int MAX_HEADER_LENGTH = 1000;

	private ParkedMessages() {
	}

	static ParkedMessage describe(GetResponse message) {
		AMQP.BasicProperties properties = message.getProps();
		Map<String, Object> headers = headers(properties);
		byte[] body = (message.getBody() != null) ? message.getBody() : new byte[0];
		String originQueue = originQueue(properties);
		String reason = HeaderChanges.parkedReasonOf(headers).value();
		String exception = text(headers.get(RetryHeaders.EXCEPTION));
		String error = text(headers.get(RetryHeaders.ERROR));
		return new ParkedMessage(properties.getMessageId(), originQueue,
				RetryHeaderValues.count(headers.get(RetryHeaders.COUNT)), reason, exception, error,
				RetryHeaderValues.epochMillis(headers.get(RetryHeaders.FIRST_FAILURE)),
				RetryHeaderValues.epochMillis(headers.get(RetryHeaders.PARKED_AT)),
				RetryHeaderValues.count(headers.get(RetryHeaders.REPLAY_COUNT)), properties.getContentType(),
				body.length, BodyPreview.of(body, properties.getContentEncoding(), PREVIEW_LENGTH),
				FailureFingerprint.of(originQueue, reason, exception, error),
				text(headers.get(RetryHeaders.STACK_TRACE)), otherHeaders(headers));
	}

	/**
	 * The queue a parked message failed on.
	 * @param properties its properties
	 * @return the queue, or {@code null} when it names none
	 */
	static @Nullable String originQueue(AMQP.BasicProperties properties) {
		String queue = text(headers(properties).get(RetryHeaders.QUEUE));
		return (queue != null && !queue.isEmpty()) ? queue : null;
	}

	/**
	 * When a message was last replayed.
	 * @param properties its properties
	 * @return the time, or {@code null} if it never was
	 */
	static @Nullable Instant replayedAt(AMQP.BasicProperties properties) {
		return RetryHeaderValues.epochMillis(headers(properties).get(RetryHeaders.REPLAYED_AT));
	}

	static Map<String, Object> headers(AMQP.BasicProperties properties) {
		return (properties.getHeaders() != null) ? properties.getHeaders() : Map.of();
	}

	private static Map<String, String> otherHeaders(Map<String, Object> headers) {
		Map<String, String> shown = new TreeMap<>();
		headers.forEach((name, value) -> {
			if (!RetryHeaders.STACK_TRACE.equals(name) && value != null) {
				String text = value.toString();
				shown.put(name, (text.length() > MAX_HEADER_LENGTH)
						? text.substring(0, MAX_HEADER_LENGTH) + BodyPreview.CUT_MARK : text);
			}
		});
		return shown;
	}

	private static @Nullable String text(@Nullable Object value) {
		return (value != null) ? value.toString() : null;
	}

}
