package dev.waymark.workflow;

import dev.waymark.core.Stoppable;
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.gc.CollectResult;
import dev.waymark.workflow.gc.CollectorListener;
import dev.waymark.workflow.internal.Args;
import dev.waymark.workflow.internal.Deadline;
import dev.waymark.workflow.internal.StopOnce;
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
 * schedule. Thread-safe. {@link Stoppable}: {@link #stop(Duration)} ends the schedule and lets a
 * running pass finish; {@link #close()} is {@code stop(}{@link Stoppable#DEFAULT_CLOSE_TIMEOUT 30 s}{@code )}.
 */
public final class WorkflowCollector implements Stoppable {

    private static final Logger log = LoggerFactory.getLogger(WorkflowCollector.class);

    private final WorkflowClient client;
    private final Duration retention;
    private final int batchSize;
    private final CollectorListener listener;
    private final ScheduledExecutorService timer;
    private final AtomicReference<CollectResult> lastPass = new AtomicReference<>();
    private final AtomicLong failedPasses = new AtomicLong();
    private final StopOnce stopping = new StopOnce("workflow collector", this::stopTimer, this::awaitStopped);

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
        Args.retention(retention);
        WorkflowEngineBuilder.positive(interval, "interval");
        Args.inRange(batchSize, "batchSize");
        WorkflowCollector collector = new WorkflowCollector(client, retention, batchSize, listener);
        log.info("waymark workflow collector: retention={}, interval={}ms, batchSize={}, listener={}", retention,
                interval.toMillis(), batchSize, listener);
        collector.timer.scheduleWithFixedDelay(collector::scheduledPass, 0, interval.toNanos(), TimeUnit.NANOSECONDS);
        return collector;
    }

    /**
     * Runs one pass now on the calling thread (beside the scheduled ones; instance locks keep two
     * passes from deleting the same instance twice) and returns what it did. An interrupt of the
     * calling thread ends the pass after the batch under way.
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
        } while (batch.deleted() == batchSize && !Thread.currentThread().isInterrupted()); // stop interrupts
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

    /**
     * Stops scheduling passes and lets a running one finish for up to {@code timeout}; then
     * interrupts it (it starts no further batch; what it did not delete stays a candidate) and waits
     * up to 10 s more for it to end. Answers whether no pass runs any more. A second or
     * concurrent call starts no second stop: it waits, within its own timeout, for the first to
     * answer and then for a pass the first left running to end. An interrupt of the caller ends the
     * wait, keeping the interrupt flag.
     *
     * @throws IllegalArgumentException if {@code timeout} is null or negative
     */
    @Override
    public boolean stop(Duration timeout) {
        return stopping.stop(timeout);
    }

    private boolean stopTimer(Duration timeout) {
        Deadline deadline = Deadline.after(timeout);
        timer.shutdown(); // cancels the schedule; a running pass ends on its own
        try {
            if (timer.awaitTermination(deadline.remainingNanos(), TimeUnit.NANOSECONDS)) {
                return true;
            }
            timer.shutdownNow();
            if (timer.awaitTermination(StopOnce.FORCED_STOP_WAIT.toNanos(), TimeUnit.NANOSECONDS)) {
                return true;
            }
            log.warn("workflow collector: a pass was still running {} s after it was interrupted",
                    StopOnce.FORCED_STOP_WAIT.toSeconds());
            return false;
        } catch (InterruptedException e) {
            timer.shutdownNow();
            Thread.currentThread().interrupt();
            return timer.isTerminated();
        }
    }

    private boolean awaitStopped(long nanos) throws InterruptedException {
        return timer.awaitTermination(nanos, TimeUnit.NANOSECONDS);
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
