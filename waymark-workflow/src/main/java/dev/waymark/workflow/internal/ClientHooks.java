package dev.waymark.workflow.internal;

import dev.waymark.workflow.status.WorkflowOutcome;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * What a {@code WorkflowClient} asks of the process it runs in: nothing for a plain client
 * ({@link #NONE}); for the client an engine composes, the engine's registry checks, backpressure and
 * local runs ({@link InProcessRuns}).
 */
public interface ClientHooks {

    /** A plain client's: no checks, no local runs. */
    ClientHooks NONE = new ClientHooks() {};

    /** Refuses a start of a name this process cannot run (an engine's registry lacks it). */
    default void checkRunnable(String name) {}

    /** Refuses an input the registered input type cannot read (nothing is written). */
    default void checkInput(String name, String id, String json) {}

    /** Waits until the runnable backlog admits one more start (an engine with backpressure). */
    default void admitStart(String name, String id) {}

    /** The owner a start leases the new instance to, so that it runs here at once; null for none. */
    default String startOwner() {
        return null;
    }

    /** The lease of an instance started with {@link #startOwner()}. */
    default Duration leaseTtl() {
        return Duration.ZERO;
    }

    /** A start committed a new instance (leased to {@link #startOwner()} when its epoch is positive). */
    default void afterStart(Instances.Key key, Instances.Started started, String input) {}

    /** A settlement woke {@code key}. */
    default void afterWake(Instances.Key key) {}

    /** An in-process future of the workflow's terminal outcome when this process runs it, else null. */
    default CompletableFuture<WorkflowOutcome<?>> watch(Instances.Key key) {
        return null;
    }

    /** Forgets a watcher {@link #watch} gave. */
    default void unwatch(Instances.Key key, CompletableFuture<WorkflowOutcome<?>> watcher) {}

    /** Whether a run of the workflow is under way in this process (its end completes {@link #watch}). */
    default boolean runsHere(Instances.Key key) {
        return false;
    }
}
