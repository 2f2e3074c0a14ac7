package io.github.tieredretry.observation;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

import com.rabbitmq.client.AMQP;
import io.micrometer.observation.transport.Kind;
import io.micrometer.observation.transport.SenderContext;
import org.jspecify.annotations.Nullable;

/**
 * A message the starter publishes on its own: its carrier is the message's headers, into
 * which a tracer writes the trace context when the observation starts;
 * {@link #publishedProperties()} are the properties to publish after that.
 */
public abstract sealed class RetrySenderContext extends SenderContext<Map<String, Object>>
		permits RetryForwardContext, RetryReplayContext {

	private final AMQP.BasicProperties properties;

	private final Map<String, Object> headers;

	private final String queue;

	RetrySenderContext(AMQP.BasicProperties properties, String queue) {
		super(RetrySenderContext::put, Kind.PRODUCER);
		this.properties = properties;
		this.headers = (properties.getHeaders() != null) ? new LinkedHashMap<>(properties.getHeaders())
				: new LinkedHashMap<>();
		this.queue = queue;
		setCarrier(this.headers);
		setRemoteServiceName("RabbitMQ");
	}

	private static void put(@Nullable Map<String, Object> carrier, String key, String value) {
		if (carrier != null) {
			carrier.put(key, value);
		}
	}

	/**
	 * The queue the message is about: the one whose listener failed, or a replay's origin
	 * queue.
	 * @return the queue's name
	 */
	public String getQueue() {
		return this.queue;
	}

	/**
	 * The message's {@code message-id}.
	 * @return its id, or {@code null} if it has none
	 */
	public @Nullable String getMessageId() {
		return this.properties.getMessageId();
	}

	/**
	 * The trace context the message carried before this step: the one it arrived with, or
	 * was parked with.
	 * @return its ids, or {@code null} when it carried none
	 */
	TraceHeaders.@Nullable TraceIds carriedTraceContext() {
		return TraceHeaders.find(this.properties.getHeaders());
	}

	/**
	 * The properties to publish: those given, with the trace context headers a tracer
	 * wrote when the observation started instead of the ones the message carried.
	 * Unchanged when no tracer wrote any.
	 * @return the properties
	 */
	public AMQP.BasicProperties publishedProperties() {
		Map<String, Object> original = (this.properties.getHeaders() != null) ? this.properties.getHeaders() : Map.of();
		Set<String> written = this.headers.entrySet()
			.stream()
			.filter((header) -> !Objects.equals(original.get(header.getKey()), header.getValue()))
			.map(Map.Entry::getKey)
			.collect(Collectors.toSet());
		if (written.isEmpty()) {
			return this.properties;
		}
		if (written.stream().anyMatch(TraceHeaders::isTraceIdentity)) {
			TraceHeaders.removeStale(this.headers, written);
		}
		return this.properties.builder().headers(new LinkedHashMap<>(this.headers)).build();
	}

}
