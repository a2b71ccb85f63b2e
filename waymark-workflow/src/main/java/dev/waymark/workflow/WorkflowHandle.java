package dev.waymark.workflow;

import dev.waymark.store.WakeSignal;
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.exception.WorkflowCancelledException;
import dev.waymark.workflow.exception.WorkflowException;
import dev.waymark.workflow.exception.WorkflowFailedException;
import dev.waymark.workflow.internal.Args;
import dev.waymark.workflow.internal.Instances;
import dev.waymark.workflow.internal.Runner;
import dev.waymark.workflow.status.CancelOutcome;
import dev.waymark.workflow.status.WorkflowInfo;
import dev.waymark.workflow.status.WorkflowOutcome;
import dev.waymark.workflow.status.WorkflowStatus;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A reference to one workflow instance: await its result, observe its status, cancel it. Cheap and
 * stateless; any process can make one with {@link WorkflowClient#handle}. Making a handle does not
 * check that the instance exists; reading or awaiting it does, and throws {@link WorkflowException}
 * at once if it does not (it was never started, or was collected): nothing waits for an instance to
 * appear.
 *
 * @param <R> the result type
 */
public final class WorkflowHandle<R> {

    private static final Duration MAX_WAIT_SLICE = Duration.ofMillis(250);

    private final WorkflowClient client;
    private final String name;
    private final String id;
    private final Class<R> resultType;

    WorkflowHandle(WorkflowClient client, String name, String id, Class<R> resultType) {
        this.client = client;
        this.name = name;
        this.id = id;
        this.resultType = Args.notNull(resultType, "resultType");
    }

    /** The workflow name. */
    public String name() {
        return name;
    }

    /** The workflow id. */
    public String id() {
        return id;
    }

    /**
     * The instance as stored now.
     *
     * @throws WorkflowException if it does not exist
     * @throws dev.waymark.store.StoreException if the database cannot be read
     */
    public WorkflowInfo info() {
        return row().info();
    }

    /**
     * The current status.
     *
     * @throws WorkflowException if it does not exist
     * @throws dev.waymark.store.StoreException if the database cannot be read
     */
    public WorkflowStatus status() {
        return info().status();
    }

    /**
     * Waits until the workflow is terminal and returns how it ended. On an engine, a run that ends in
     * this process completes the wait in-process; otherwise the wait is woken by the store's wake
     * signal (another process's completion arrives through its coalesced NOTIFY). Either way the
     * stored state is re-checked at least every 250 ms.
     *
     * @throws TimeoutException if it is still running or suspended after {@code timeout}
     * @throws WorkflowException if it does not exist (checked at once, and at every re-check: an
     *     instance collected meanwhile ends the wait too)
     * @throws dev.waymark.store.StoreException if the database cannot be read
     * @throws InvalidWorkflowInputException if {@code timeout} is null
     */
    public WorkflowOutcome<R> awaitOutcome(Duration timeout) throws TimeoutException, InterruptedException {
        long deadline = System.nanoTime() + Args.notNull(timeout, "timeout").toNanos();
        Instances.Key key = new Instances.Key(name, id);
        CompletableFuture<WorkflowOutcome<?>> local = client.watch(key); // completed in-process by the engine
        WakeSignal wake = local == null ? client.store.wakeSignal() : null;
        try {
            if (local != null) {
                // A run here ends by completing `local` (watched before this check), so the row
                // needs reading only if that does not come. A run that ended before the watch
                // began no longer counts as under way: its (committed) end is read from the row.
                if (client.runsHere(key)) {
                    try {
                        WorkflowOutcome<R> adopted = adopt(
                                local.get(Math.min(deadline - System.nanoTime(), MAX_WAIT_SLICE.toNanos()),
                                        TimeUnit.NANOSECONDS));
                        if (adopted != null) {
                            return adopted;
                        }
                        local = client.watch(key);
                    } catch (TimeoutException | ExecutionException e) {
                        // still running (or ended in a way to read from the row): read it below
                    }
                }
            }
            while (true) {
                long seen = wake == null ? 0 : wake.generation();
                Instances.Row row = row();
                if (row.info().status().isTerminal()) {
                    return outcome(row);
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    throw new TimeoutException("workflow " + name + "/" + id + " is still "
                            + row.info().status().sqlValue() + " after " + timeout
                            + (row.info().waitingOn() == null ? "" : " (waiting on " + row.info().waitingOn() + ")"));
                }
                long slice = Math.min(remaining, MAX_WAIT_SLICE.toNanos());
                if (wake != null) {
                    wake.awaitAfter(seen, Duration.ofNanos(slice));
                    continue;
                }
                try {
                    WorkflowOutcome<R> adopted = adopt(local.get(slice, TimeUnit.NANOSECONDS));
                    if (adopted != null) {
                        return adopted;
                    }
                    local = client.watch(key); // completed with something we re-read from the row
                } catch (TimeoutException | ExecutionException e) {
                    // not finished here (it may finish in another process): look at the row again
                }
            }
        } finally {
            if (local != null) {
                client.unwatch(key, local);
            }
        }
    }

    private WorkflowOutcome<R> adopt(WorkflowOutcome<?> o) {
        return switch (o) {
            case WorkflowOutcome.Completed<?> c when c.result() == null || resultType.isInstance(c.result()) ->
                new WorkflowOutcome.Completed<>(resultType.cast(c.result()));
            case WorkflowOutcome.Cancelled<?> c -> new WorkflowOutcome.Cancelled<>();
            case WorkflowOutcome.Failed<?> f -> new WorkflowOutcome.Failed<>(f.reason());
            default -> null;
        };
    }

    /**
     * Waits for the result.
     *
     * @throws WorkflowFailedException if the workflow failed (the message holds the reason)
     * @throws WorkflowCancelledException if it was cancelled
     * @throws TimeoutException if it did not end within {@code timeout}
     * @throws WorkflowException if it does not exist, as {@link #awaitOutcome}
     * @throws dev.waymark.store.StoreException if the database cannot be read
     */
    public R await(Duration timeout) throws TimeoutException, InterruptedException {
        return switch (awaitOutcome(timeout)) {
            case WorkflowOutcome.Completed<R> c -> c.result();
            case WorkflowOutcome.Failed<R> f -> throw new WorkflowFailedException(
                    "workflow " + name + "/" + id + " failed: " + f.reason());
            case WorkflowOutcome.Cancelled<R> c -> throw new WorkflowCancelledException(
                    "workflow " + name + "/" + id + " was cancelled");
            default -> throw new IllegalStateException("not terminal");
        };
    }

    /** Cancels the workflow; see {@link WorkflowClient#cancel}. */
    public CancelOutcome cancel() {
        return client.cancel(name, id);
    }

    private Instances.Row row() {
        return client.instances.find(name, id).orElseThrow(() -> new WorkflowException(
                "workflow " + name + "/" + id + " does not exist (never started, or collected)"));
    }

    private WorkflowOutcome<R> outcome(Instances.Row row) {
        return Runner.terminalOutcome(row, client.runtime.codec(), resultType);
    }

    @Override
    public String toString() {
        return "WorkflowHandle[" + name + "/" + id + "]";
    }
}
