package dev.waymark.messaging.micrometer;

import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Message;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.messaging.ProcessorListener;
import dev.waymark.messaging.ProcessorState;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * Micrometer metrics of a {@link ProcessingApp}, tagged {@code processor}: register it as the app's
 * listener, then {@link #bind(ProcessingApp)} the built app. A meter reads only its own processor's
 * state when it is scraped, so a scrape costs time in proportion to the number of processors.
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>meaning</th></tr>
 *   <tr><td>waymark.messaging.received</td><td>counter</td><td>messages pulled from the source</td></tr>
 *   <tr><td>waymark.messaging.processed</td><td>counter</td><td>finalized with ok or retry</td></tr>
 *   <tr><td>waymark.messaging.failed</td><td>counter</td><td>handler exceptions and dead letters</td></tr>
 *   <tr><td>waymark.messaging.retried</td><td>counter</td><td>finalized with retry</td></tr>
 *   <tr><td>waymark.messaging.dead_lettered</td><td>counter</td><td>finalized with a dead letter</td></tr>
 *   <tr><td>waymark.messaging.in_flight</td><td>gauge</td><td>handlers running</td></tr>
 *   <tr><td>waymark.messaging.inbox.depth</td><td>gauge</td><td>messages pulled, not started</td></tr>
 *   <tr><td>waymark.messaging.state</td><td>gauge</td><td>{@link ProcessorState.Lifecycle} ordinal</td></tr>
 *   <tr><td>waymark.messaging.handler</td><td>timer</td><td>handler time, tagged also with {@code outcome}</td></tr>
 * </table>
 */
public final class MessagingMetrics implements ProcessorListener {

    private final MeterRegistry registry;
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();

    /** Metrics into {@code registry}. */
    public MessagingMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** Registers the counters and gauges of every processor of {@code app}. */
    public ProcessingApp bind(ProcessingApp app) {
        for (String id : app.processorIds()) {
            counter(app, id, "waymark.messaging.received", ProcessorState::received);
            counter(app, id, "waymark.messaging.processed", ProcessorState::processed);
            counter(app, id, "waymark.messaging.failed", ProcessorState::failed);
            counter(app, id, "waymark.messaging.retried", ProcessorState::retried);
            counter(app, id, "waymark.messaging.dead_lettered", ProcessorState::deadLettered);
            gauge(app, id, "waymark.messaging.in_flight", ProcessorState::inFlight);
            gauge(app, id, "waymark.messaging.inbox.depth", ProcessorState::inboxDepth);
            gauge(app, id, "waymark.messaging.state", s -> s.lifecycle().ordinal());
        }
        return app;
    }

    private void counter(ProcessingApp app, String id, String name, ToDoubleFunction<ProcessorState> value) {
        FunctionCounter.builder(name, app, a -> value.applyAsDouble(a.snapshot(id)))
                .tag("processor", id).register(registry);
    }

    private void gauge(ProcessingApp app, String id, String name, ToDoubleFunction<ProcessorState> value) {
        Gauge.builder(name, app, a -> value.applyAsDouble(a.snapshot(id))).tag("processor", id).register(registry);
    }

    @Override
    public void handled(String processorId, Message message, AckDecision decision, long handlerNanos, Throwable error) {
        String outcome = error != null ? "exception" : switch (decision) {
            case AckDecision.Ok ok -> "ok";
            case AckDecision.Retry r -> "retry";
            case AckDecision.DeadLetter d -> "dead_letter";
            case AckDecision.Halt h -> "halt";
        };
        timers.computeIfAbsent(processorId + "/" + outcome, k -> Timer.builder("waymark.messaging.handler")
                .tag("processor", processorId).tag("outcome", outcome).publishPercentileHistogram()
                .register(registry))
                .record(handlerNanos, TimeUnit.NANOSECONDS);
    }
}
