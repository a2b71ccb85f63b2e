package dev.waymark.workflow.otel;

import dev.waymark.workflow.listener.WorkflowListener;
import dev.waymark.workflow.status.WorkflowOutcome;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * OpenTelemetry spans for workflows, as a {@link WorkflowListener}: one span {@code workflow <name>}
 * per attempt (current while the body runs, so spans the application opens in steps nest under it)
 * and one child span {@code step <name>} per freshly executed step. Replayed steps make no span.
 * Attributes: {@code waymark.workflow.name}, {@code waymark.workflow.id}, {@code waymark.workflow.outcome},
 * {@code waymark.workflow.step}.
 */
public final class WorkflowTracing implements WorkflowListener {

    private record Open(Span span, Scope scope) {}

    private final Tracer tracer;
    private final ThreadLocal<Deque<Open>> open = ThreadLocal.withInitial(ArrayDeque::new);

    /** Spans from {@code openTelemetry}'s tracer {@code dev.waymark.workflow}. */
    public WorkflowTracing(OpenTelemetry openTelemetry) {
        this.tracer = openTelemetry.getTracer("dev.waymark.workflow");
    }

    @Override
    public void runStarted(String name, String id) {
        Span span = tracer.spanBuilder("workflow " + name).setSpanKind(SpanKind.INTERNAL)
                .setAttribute("waymark.workflow.name", name).setAttribute("waymark.workflow.id", id).startSpan();
        open.get().push(new Open(span, span.makeCurrent()));
    }

    @Override
    public void runFinished(String name, String id, WorkflowOutcome<?> outcome, Throwable error, Duration elapsed) {
        Open o = open.get().poll();
        if (o == null) {
            return;
        }
        o.scope().close();
        String kind = WorkflowListener.outcomeLabel(outcome); // the metrics' label: traces and metrics join on it
        o.span().setAttribute("waymark.workflow.outcome", kind);
        if (error != null) {
            o.span().recordException(error);
            o.span().setStatus(StatusCode.ERROR, String.valueOf(error.getMessage()));
        } else if (outcome instanceof WorkflowOutcome.Failed<?> f) {
            o.span().setStatus(StatusCode.ERROR, f.reason());
        }
        o.span().end();
        if (open.get().isEmpty()) {
            open.remove();
        }
    }

    @Override
    public void stepExecuted(String name, String step, Duration elapsed) {
        Instant end = Instant.now();
        tracer.spanBuilder("step " + step).setSpanKind(SpanKind.INTERNAL)
                .setStartTimestamp(end.minus(elapsed))
                .setAttribute("waymark.workflow.name", name).setAttribute("waymark.workflow.step", step)
                .startSpan().end(end);
    }
}
