package io.github.tieredretry.observation;

import io.micrometer.observation.Observation;
import io.micrometer.tracing.Link;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.TraceContext;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import io.micrometer.tracing.propagation.Propagator;
import org.jspecify.annotations.Nullable;

/**
 * The spans of the starter's forwards and replays; like Micrometer Tracing's sender
 * handler (the span's context is written into the message's headers), with two
 * differences:
 * <ul>
 * <li>a forward without a parent observation (the container does not observe its
 * listener) continues the trace the message arrived with, rather than starting a trace of
 * its own that would cut the retry off from its producer;</li>
 * <li>a replay never continues the trace the message was parked in (days old, perhaps):
 * its span starts a new trace, or is a child of the replaying thread's observation, with
 * a link to the parked message's span.</li>
 * </ul>
 * It must come before the general sender handler in the tracing handlers' order.
 */
public class RetryTracingObservationHandler extends PropagatingSenderTracingObservationHandler<RetrySenderContext> {

	/**
	 * Create the handler.
	 * @param tracer the tracer
	 * @param propagator writes the span's context into the message's headers
	 */
	public RetryTracingObservationHandler(Tracer tracer, Propagator propagator) {
		super(tracer, propagator);
	}

	@Override
	public boolean supportsContext(Observation.Context context) {
		return context instanceof RetrySenderContext;
	}

	@Override
	public Span createSenderSpan(RetrySenderContext context) {
		Span parent = getParentSpan(context);
		if (parent == null) {
			parent = getTracer().currentSpan();
		}
		TraceContext carried = carriedTraceContext(context);
		Span.Builder builder = getTracer().spanBuilder().kind(Span.Kind.PRODUCER);
		if (parent != null) {
			builder.setParent(parent.context());
		}
		if (context instanceof RetryReplayContext) {
			if (carried != null) {
				builder.addLink(new Link(carried));
			}
		}
		else if (parent == null && carried != null) {
			builder.setParent(carried);
		}
		String remoteServiceName = context.getRemoteServiceName();
		if (remoteServiceName != null) {
			builder.remoteServiceName(remoteServiceName);
		}
		return builder.start();
	}

	private @Nullable TraceContext carriedTraceContext(RetrySenderContext context) {
		TraceHeaders.TraceIds ids = context.carriedTraceContext();
		if (ids == null) {
			return null;
		}
		return getTracer().traceContextBuilder()
			.traceId(ids.traceId())
			.spanId(ids.spanId())
			.sampled(ids.sampled())
			.build();
	}

}
