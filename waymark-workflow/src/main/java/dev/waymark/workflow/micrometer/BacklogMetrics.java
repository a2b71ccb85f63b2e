package dev.waymark.workflow.micrometer;

import dev.waymark.workflow.backpressure.WorkflowBacklog;
import dev.waymark.workflow.WorkflowEngine;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.ToDoubleFunction;

/**
 * Micrometer gauges of an engine's runnable backlog ({@link WorkflowEngine#backlog()}) and of its
 * intake health ({@link WorkflowEngine#acceptsStarts()}). A scrape reads the engine's shared sample,
 * so the database sees at most one backlog statement per sample interval however often it is
 * scraped; a gauge whose sample cannot be read reports NaN. Names are listed in docs/METRICS.md.
 *
 * <pre>{@code
 * BacklogMetrics.bind(registry, engine);
 * }</pre>
 */
public final class BacklogMetrics {

    private BacklogMetrics() {}

    /** Registers the backlog gauges of {@code engine} on {@code registry}. */
    public static void bind(MeterRegistry registry, WorkflowEngine engine) {
        gauge(registry, engine, "waymark.workflow.backlog.runnable",
                "instances runnable now (running, or with a due wake time), in flight included",
                WorkflowBacklog::runnable);
        gauge(registry, engine, "waymark.workflow.backlog.sleeping",
                "instances suspended until a wake time still ahead", WorkflowBacklog::sleeping);
        gauge(registry, engine, "waymark.workflow.backlog.waiting",
                "runnable instances no live worker holds: work waiting for a resume worker", WorkflowBacklog::waiting);
        gauge(registry, engine, "waymark.workflow.backlog.oldest",
                "seconds the oldest waiting instance has been due", b -> b.oldestWaiting().toNanos() / 1e9);
        gauge(registry, engine, "waymark.workflow.backlog.in_flight",
                "attempts running in this process (engine runs and resume-worker attempts)",
                WorkflowBacklog::inFlightHere);
        Gauge.builder("waymark.workflow.held", engine, WorkflowEngine::heldWaits)
                .description("runs of this engine waiting in memory for a sleep or an awakeable (holdWaits)")
                .register(registry);
        Gauge.builder("waymark.workflow.intake.open", engine, e -> {
            try {
                return e.acceptsStarts() ? 1 : 0;
            } catch (RuntimeException ex) {
                return Double.NaN;
            }
        }).description("1 while the backlog is within the engine's backpressure bound (start does not wait), else 0")
                .register(registry);
    }

    private static void gauge(MeterRegistry registry, WorkflowEngine engine, String name, String description,
            ToDoubleFunction<WorkflowBacklog> value) {
        Gauge.builder(name, engine, e -> {
            try {
                return value.applyAsDouble(e.backlog());
            } catch (RuntimeException ex) {
                return Double.NaN;
            }
        }).description(description).register(registry);
    }
}
