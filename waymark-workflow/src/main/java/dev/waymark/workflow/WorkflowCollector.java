package dev.waymark.workflow;

import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.gc.CollectResult;
import dev.waymark.workflow.gc.CollectorListener;
import dev.waymark.workflow.internal.Args;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes finished workflows after a retention period, in the background: every {@code interval} a
 * pass calls {@link WorkflowClient#collect} with batches of {@code batchSize} until a batch deletes
 * fewer than that. Any number of processes may run one (each instance is deleted under its lock,
 * once); a failing pass (even one that throws an {@link Error}) is logged and the next one runs on
 * schedule. Thread-safe.
 */
public final class WorkflowCollector implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(WorkflowCollector.class);

    private final WorkflowClient client;
    private final Duration retention;
    private final int batchSize;
    private final CollectorListener listener;
    private final ScheduledExecutorService timer;
    private final AtomicReference<CollectResult> lastPass = new AtomicReference<>();
    private final AtomicLong failedPasses = new AtomicLong();

    private WorkflowCollector(WorkflowClient client, Duration retention, int batchSize, CollectorListener listener) {
        this.client = client;
        this.retention = retention;
        this.batchSize = batchSize;
        this.listener = listener;
        this.timer = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().name("waymark-workflow-collector").daemon().factory());
    }

    /**
     * Starts collecting: a first pass at once, then one every {@code interval}.
     *
     * @param retention how long a finished instance is kept (completed, cancelled or failed at least
     *     this long ago by the database clock); zero collects as soon as an instance finishes
     * @param interval time between the end of one pass and the start of the next; positive
     * @param batchSize instances per batch, in [1, 10000]
     * @throws InvalidWorkflowInputException for a negative retention, a non-positive interval or a
     *     batch size out of range
     */
    public static WorkflowCollector start(WorkflowClient client, Duration retention, Duration interval,
            int batchSize) {
        return start(client, retention, interval, batchSize, CollectorListener.NONE);
    }

    /**
     * As {@link #start(WorkflowClient, Duration, Duration, int)}, telling {@code listener} about every
     * pass (for example {@code dev.waymark.workflow.micrometer.CollectorMetrics}).
     */
    public static WorkflowCollector start(WorkflowClient client, Duration retention, Duration interval,
            int batchSize, CollectorListener listener) {
        Args.notNull(client, "client");
        Args.notNull(listener, "listener");
        WorkflowClient.requireRetention(retention);
        WorkflowEngineBuilder.positive(interval, "interval");
        WorkflowClient.requireInRange(batchSize, "batchSize");
        WorkflowCollector collector = new WorkflowCollector(client, retention, batchSize, listener);
        collector.timer.scheduleWithFixedDelay(collector::scheduledPass, 0, interval.toNanos(), TimeUnit.NANOSECONDS);
        return collector;
    }

    /**
     * Runs one pass now on the calling thread (beside the scheduled ones; instance locks keep two
     * passes from deleting the same instance twice) and returns what it did.
     *
     * @throws dev.waymark.store.StoreException if the candidates cannot be read
     */
    public CollectResult runPass() {
        long started = System.nanoTime();
        CollectResult total = new CollectResult(0, 0, 0);
        CollectResult batch;
        do {
            batch = client.collect(retention, batchSize);
            total = total.plus(batch);
        } while (batch.deleted() == batchSize);
        lastPass.set(total);
        Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
        try {
            listener.onPass(total, elapsed);
        } catch (RuntimeException | LinkageError | AssertionError e) {
            log.debug("workflow collector: listener failed: {}", e.toString());
        }
        return total;
    }

    /** The result of the last pass that ended without failing, if any has. */
    public Optional<CollectResult> lastPass() {
        return Optional.ofNullable(lastPass.get());
    }

    /** Passes that failed (logged) since the start. */
    public long failedPasses() {
        return failedPasses.get();
    }

    /** Stops scheduling passes and waits up to 10 s for a running one to end. */
    @Override
    public void close() {
        timer.shutdown(); // cancels the schedule; a running pass ends on its own
        try {
            if (!timer.awaitTermination(10, TimeUnit.SECONDS)) {
                log.warn("workflow collector: a pass was still running 10 s after close");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void scheduledPass() {
        try {
            CollectResult result = runPass();
            if (result.deleted() > 0 || result.skipped() > 0) {
                log.info("workflow collector: deleted {} finished workflow(s), skipped {}", result.deleted(),
                        result.skipped());
            }
        } catch (RuntimeException | Error e) {
            // an Error too: a scheduled task that throws is never run again, and collection would
            // stop for good without a word
            failedPasses.incrementAndGet();
            log.warn("workflow collector: pass failed; finished workflows stay eligible: {}", e.toString());
            try {
                listener.onPassFailed(e);
            } catch (RuntimeException | Error ignored) {
                log.debug("workflow collector: listener failed: {}", ignored.toString());
            }
        }
    }
}
