package io.github.tieredretry.sample;

import java.util.Collection;
import java.util.stream.Collectors;

import io.opentelemetry.api.trace.SpanId;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.stereotype.Component;

/**
 * Logs every finished span on one line, with its parent, status and links, so that the
 * trace of a retried order can be read in the console without a tracing backend.
 * {@code sample.tracing.console=false} switches it off; spans also go to an OpenTelemetry
 * collector when {@code management.opentelemetry.tracing.export.otlp.endpoint} is set
 * (Spring Boot's OTLP exporter).
 */
@Component
@ConditionalOnBooleanProperty(name = "sample.tracing.console", matchIfMissing = true)
class ConsoleSpanExporter implements SpanExporter {

	private static final Logger logger = LoggerFactory.getLogger(ConsoleSpanExporter.class);

	@Override
	public CompletableResultCode export(Collection<SpanData> spans) {
		spans.forEach((span) -> logger.info("trace {} span {} parent {} {} '{}'{}{} {}", span.getTraceId(),
				span.getSpanId(), SpanId.isValid(span.getParentSpanId()) ? span.getParentSpanId() : "(none)          ",
				span.getKind(), span.getName(), (span.getStatus().getStatusCode() == StatusCode.ERROR) ? " ERROR" : "",
				links(span),
				span.getAttributes()
					.asMap()
					.entrySet()
					.stream()
					.map((attribute) -> attribute.getKey().getKey() + "=" + attribute.getValue())
					.sorted()
					.collect(Collectors.joining(", ", "{", "}"))));
		return CompletableResultCode.ofSuccess();
	}

	private static String links(SpanData span) {
		return span.getLinks()
			.stream()
			.map((link) -> " link " + link.getSpanContext().getTraceId() + "/" + link.getSpanContext().getSpanId())
			.collect(Collectors.joining());
	}

	@Override
	public CompletableResultCode flush() {
		return CompletableResultCode.ofSuccess();
	}

	@Override
	public CompletableResultCode shutdown() {
		return CompletableResultCode.ofSuccess();
	}

}
