package dev.waymark.workflow.micrometer;

import dev.waymark.workflow.gc.CollectResult;
import dev.waymark.workflow.gc.CollectorListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/**
 * Micrometer meters of a {@link dev.waymark.workflow.WorkflowCollector}'s passes. Names are listed
 * in docs/METRICS.md.
 *
 * <pre>{@code
 * WorkflowCollector.start(client, Duration.ofDays(7), Duration.ofMinutes(10), 500, new CollectorMetrics(registry));
 * }</pre>
 */
public final class CollectorMetrics implements CollectorListener {

    private final Counter deleted;
    private final Counter skipped;
    private final Counter passFailures;
    private final Timer pass;

    /** Meters on {@code registry}. */
    public CollectorMetrics(MeterRegistry registry) {
        deleted = Counter.builder("waymark.workflow.collect.deleted")
                .description("finished instances deleted with their journals").register(registry);
        skipped = Counter.builder("waymark.workflow.collect.skipped")
                .description("candidates left in place (lock held, revived, or deletion failed)").register(registry);
        passFailures = Counter.builder("waymark.workflow.collect.pass_failures").register(registry);
        pass = Timer.builder("waymark.workflow.collect.pass").register(registry);
    }

    @Override
    public void onPass(CollectResult result, Duration elapsed) {
        deleted.increment(result.deleted());
        skipped.increment(result.skipped());
        pass.record(elapsed);
    }

    @Override
    public void onPassFailed(Throwable error) {
        passFailures.increment();
    }
}
