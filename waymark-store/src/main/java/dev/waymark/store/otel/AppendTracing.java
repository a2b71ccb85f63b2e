package dev.waymark.store.otel;

import dev.waymark.store.AppendResult;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.InvalidInputException;
import dev.waymark.store.StreamNames;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import java.util.List;

/**
 * Traced appends: a {@code PRODUCER} span {@code append <category>} around the append, whose W3C
 * trace context is written into every event's metadata ({@code traceparent}, {@code tracestate}).
 * Subscriptions hand that context on (the event-store message source puts it on the envelope, and
 * {@code MessageTracing} makes it the parent of the consumer span), so a trace runs from the append
 * to every handler of the event.
 */
public final class AppendTracing {

    private final Tracer tracer;

    /** Spans from {@code openTelemetry}'s tracer {@code dev.waymark.store}. */
    public AppendTracing(OpenTelemetry openTelemetry) {
        this.tracer = openTelemetry.getTracer("dev.waymark.store");
    }

    /**
     * {@link EventStore#append(String, ExpectedVersion, List)} inside a span that the events carry.
     *
     * @throws InvalidInputException as the store would, for a null or invalid stream name, a null
     *     event list or a null event (before a span is started)
     */
    @SuppressWarnings("try") // the scope makes the span current for withCurrentContext
    public AppendResult append(EventStore store, String stream, ExpectedVersion expected, List<EventData> events) {
        StreamNames.requireValid(stream);
        if (events == null) {
            throw new InvalidInputException("events must not be null (stream " + stream + ")");
        }
        for (int i = 0; i < events.size(); i++) {
            if (events.get(i) == null) {
                throw new InvalidInputException("event " + i + " of the append to stream '" + stream + "' is null");
            }
        }
        Span span = tracer.spanBuilder("append " + StreamNames.category(stream)).setSpanKind(SpanKind.PRODUCER)
                .setAttribute("waymark.stream", stream).setAttribute("waymark.events", events.size()).startSpan();
        try (Scope ignored = span.makeCurrent()) {
            AppendResult r = store.append(stream, expected,
                    events.stream().map(AppendTracing::withCurrentContext).toList());
            span.setAttribute("waymark.stream.version", r.streamVersion());
            return r;
        } catch (RuntimeException e) {
            span.recordException(e);
            span.setStatus(StatusCode.ERROR, String.valueOf(e.getMessage()));
            throw e;
        } finally {
            span.end();
        }
    }

    /** {@code event} carrying the current span's W3C trace context; unchanged when there is no valid span. */
    public static EventData withCurrentContext(EventData event) {
        SpanContext c = Span.current().getSpanContext();
        if (!c.isValid()) {
            return event;
        }
        String traceparent = "00-" + c.getTraceId() + "-" + c.getSpanId() + "-" + c.getTraceFlags().asHex();
        String tracestate = c.getTraceState().isEmpty() ? null : w3cTraceState(c);
        return event.withTraceContext(traceparent, tracestate);
    }

    private static String w3cTraceState(SpanContext c) {
        StringBuilder b = new StringBuilder();
        c.getTraceState().forEach((k, v) -> b.append(b.length() == 0 ? "" : ",").append(k).append('=').append(v));
        return b.toString();
    }
}
