package dev.waymark.kafka.otel;

import dev.waymark.kafka.DeadLetterHeaders;
import dev.waymark.kafka.DeadLetterTracing;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * OpenTelemetry spans for dead-letter publishing: one {@code PRODUCER} span {@code publish <dlt topic>}
 * per dead letter, a child of the original record's W3C trace context, and the dead letter carries
 * the new span's context in its {@code traceparent} / {@code tracestate} headers. (The consume
 * span of each record comes from {@code MessageTracing} in waymark-messaging, whose parent is the
 * record's {@code traceparent} header.) With several {@code traceparent} headers, the first is the
 * parent, as for the envelope. Register with {@code KafkaSourceConfigBuilder.listener}.
 */
public final class KafkaTracing implements DeadLetterTracing {

    private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();
    /**
     * The first header of a name with a value, as the envelope's trace context is read
     * ({@code RecordConverter}): the publish span joins the trace the record was handled in.
     */
    private static final TextMapGetter<Headers> FIRST = new TextMapGetter<>() {
        @Override
        public String get(Headers carrier, String key) {
            if (carrier != null) {
                for (Header h : carrier.headers(key)) {
                    if (h.value() != null) {
                        return new String(h.value(), StandardCharsets.UTF_8);
                    }
                }
            }
            return null;
        }
    };

    private final Tracer tracer;

    /** Spans from {@code openTelemetry}'s tracer {@code dev.waymark.kafka}. */
    public KafkaTracing(OpenTelemetry openTelemetry) {
        this.tracer = openTelemetry.getTracer("dev.waymark.kafka");
    }

    @Override
    public Scope publishing(ConsumerRecord<byte[], byte[]> original, ProducerRecord<byte[], byte[]> out) {
        Context parent = W3C.extract(Context.root(), original.headers(), FIRST);
        Span span = tracer.spanBuilder("publish " + out.topic()).setParent(parent).setSpanKind(SpanKind.PRODUCER)
                .setAttribute("messaging.system", "kafka")
                .setAttribute("messaging.destination.name", out.topic())
                .setAttribute("waymark.dlt.original.topic", original.topic())
                .setAttribute("waymark.dlt.original.partition", (long) original.partition())
                .setAttribute("waymark.dlt.original.offset", original.offset())
                .setAttribute("waymark.dlt.reason", reason(out.headers()))
                .startSpan();
        out.headers().remove("traceparent");
        out.headers().remove("tracestate");
        W3C.inject(Context.root().with(span), out.headers(),
                (headers, key, value) -> headers.add(key, value.getBytes(StandardCharsets.UTF_8)));
        return error -> {
            if (error != null) {
                span.recordException(error);
                span.setStatus(StatusCode.ERROR, String.valueOf(error.getMessage()));
            }
            span.end();
        };
    }

    /** The reason this publication added: the last one, after any the original record carried. */
    private static String reason(Headers headers) {
        Header h = headers.lastHeader(DeadLetterHeaders.REASON);
        return h == null || h.value() == null ? "" : new String(h.value(), StandardCharsets.UTF_8);
    }
}
