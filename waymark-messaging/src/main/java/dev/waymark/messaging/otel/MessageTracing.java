package dev.waymark.messaging.otel;

import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Attributes;
import dev.waymark.messaging.Envelope;
import dev.waymark.messaging.Handler;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import java.util.Map;

/**
 * One OpenTelemetry consumer span per message, its parent taken from the envelope's W3C trace
 * context. Wrap a handler: {@code MessageTracing.wrap(openTelemetry, "payments", handler)}. The span
 * is current while the handler runs, so the handler's own spans become its children.
 *
 * <p>The span carries {@code messaging.system=waymark}, {@code messaging.destination.name} (the
 * processor id), {@code messaging.operation.type=process}, {@code messaging.message.id},
 * {@code waymark.processor} and {@code waymark.attempt}, and the envelope's
 * {@linkplain Envelope#attributes() attributes}: where the source sets a name these set too, the
 * source's value is the only one set, whatever its type (the Kafka adapter's
 * {@code messaging.system=kafka}, for one).
 */
public final class MessageTracing {

    private static final TextMapGetter<Envelope> GETTER = new TextMapGetter<>() {
        @Override
        public String get(Envelope envelope, String key) {
            if (envelope == null) {
                return null;
            }
            return switch (key) {
                case "traceparent" -> envelope.traceparent();
                case "tracestate" -> envelope.tracestate();
                default -> null;
            };
        }
    };

    private MessageTracing() {}

    /** {@code handler}, with a consumer span around each call. */
    public static Handler wrap(OpenTelemetry openTelemetry, String processorId, Handler handler) {
        Tracer tracer = openTelemetry.getTracer("dev.waymark.messaging");
        return message -> {
            Envelope envelope = message.envelope();
            Context parent = W3CTraceContextPropagator.getInstance().extract(Context.root(), envelope, GETTER);
            SpanBuilder builder = tracer.spanBuilder(processorId + " process")
                    .setParent(parent)
                    .setSpanKind(SpanKind.CONSUMER);
            // The source wins: a name it sets is not set here at all (the SDK keeps an attribute per
            // name and type, so a default of another type would compete with the source's value).
            Map<String, Attributes.Value> fromSource = envelope.attributes().values();
            setDefault(builder, fromSource, "messaging.system", "waymark");
            setDefault(builder, fromSource, "messaging.destination.name", processorId);
            setDefault(builder, fromSource, "messaging.operation.type", "process");
            setDefault(builder, fromSource, "messaging.message.id", envelope.messageId());
            setDefault(builder, fromSource, "waymark.processor", processorId);
            if (!fromSource.containsKey("waymark.attempt")) {
                builder.setAttribute("waymark.attempt", (long) envelope.attempt());
            }
            fromSource.forEach((name, value) -> set(builder, name, value));
            Span span = builder.startSpan();
            Scope scope = span.makeCurrent();
            try {
                AckDecision decision = handler.handle(message);
                switch (decision) {
                    case AckDecision.Ok ok -> span.setStatus(StatusCode.OK);
                    case AckDecision.Retry r -> span.addEvent("ack_retry");
                    case AckDecision.DeadLetter d -> {
                        span.setAttribute("waymark.dead_letter.reason.code", d.reason().kind());
                        span.setStatus(StatusCode.ERROR, d.reason().summary());
                    }
                    case AckDecision.Halt h -> span.setStatus(StatusCode.ERROR, "halt: " + h.reason());
                }
                return decision;
            } catch (Exception | Error e) {
                span.recordException(e);
                span.setStatus(StatusCode.ERROR, e.toString());
                throw e;
            } finally {
                scope.close();
                span.end();
            }
        };
    }

    /** Sets one source attribute on the span, typed as the source typed it. */
    private static void setDefault(SpanBuilder builder, Map<String, Attributes.Value> fromSource, String name,
            String value) {
        if (!fromSource.containsKey(name)) {
            builder.setAttribute(name, value);
        }
    }

    private static void set(SpanBuilder builder, String name, Attributes.Value value) {
        switch (value) {
            case Attributes.Value.Text t -> builder.setAttribute(name, t.value());
            case Attributes.Value.Int64 i -> builder.setAttribute(name, i.value());
            case Attributes.Value.Float64 f -> builder.setAttribute(name, f.value());
            case Attributes.Value.Bool b -> builder.setAttribute(name, b.value());
        }
    }
}
