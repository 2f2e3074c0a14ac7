package io.github.tieredretry.observation;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import com.rabbitmq.client.impl.LongStringHelper;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link TraceHeaders}: the trace context a message carries, read without a
 * tracer.
 */
class TraceHeadersTests {

	@Test
	void w3cTraceparentGivesTheTraceAndTheSpanThatSentTheMessage() {
		assertThat(TraceHeaders.find(Map.of("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")))
			.isEqualTo(new TraceHeaders.TraceIds("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", true));
		assertThat(TraceHeaders.find(Map.of("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")))
			.extracting(TraceHeaders.TraceIds::sampled)
			.isEqualTo(false);
	}

	@Test
	void headerValuesAsTheAmqpClientDeliversThemAreRead() {
		String traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
		assertThat(TraceHeaders.find(Map.of("traceparent", LongStringHelper.asLongString(traceparent)))).isNotNull();
		assertThat(TraceHeaders.find(Map.of("traceparent", traceparent.getBytes(StandardCharsets.UTF_8)))).isNotNull();
	}

	@Test
	void b3SingleHeaderIsReadWhenThereIsNoTraceparentAndA64BitTraceIdIsWidened() {
		assertThat(TraceHeaders.find(Map.of("b3", "a3ce929d0e0e4736-00f067aa0ba902b7-1-05e3ac9a4f6e3b90")))
			.isEqualTo(new TraceHeaders.TraceIds("0000000000000000a3ce929d0e0e4736", "00f067aa0ba902b7", true));
		assertThat(TraceHeaders.find(Map.of("b3", "0"))).as("a sampling decision alone carries no context").isNull();
	}

	@Test
	void b3MultiHeadersAreMatchedIgnoringCase() {
		assertThat(TraceHeaders.find(Map.of("x-b3-traceid", "4bf92f3577b34da6a3ce929d0e0e4736", "X-B3-SpanId",
				"00f067aa0ba902b7", "X-B3-Sampled", "0")))
			.isEqualTo(new TraceHeaders.TraceIds("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", false));
	}

	@Test
	void malformedOrAllZeroContextsAreNoContext() {
		assertThat(TraceHeaders.find(Map.of("traceparent", "00-00000000000000000000000000000000-00f067aa0ba902b7-01")))
			.isNull();
		assertThat(TraceHeaders.find(Map.of("traceparent", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")))
			.isNull();
		assertThat(TraceHeaders.find(Map.of("traceparent", "not a trace"))).isNull();
		assertThat(TraceHeaders.find(Map.of("b3", "xyz-00f067aa0ba902b7"))).isNull();
		assertThat(TraceHeaders.find(Map.of("tenant", "acme"))).isNull();
		assertThat(TraceHeaders.find(null)).isNull();
	}

	@Test
	void staleTraceHeadersOfOtherFormatsAreRemovedAndEverythingElseIsKept() {
		Map<String, Object> headers = new LinkedHashMap<>();
		headers.put("traceparent", "new");
		headers.put("b3", "stale");
		headers.put("X-B3-TraceId", "stale");
		headers.put("baggage", "tenant=acme");
		headers.put("tenant", "acme");

		TraceHeaders.removeStale(headers, Set.of("traceparent"));

		assertThat(headers).containsOnlyKeys("traceparent", "baggage", "tenant");
	}

}
