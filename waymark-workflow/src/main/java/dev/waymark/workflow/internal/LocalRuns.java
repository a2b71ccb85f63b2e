package dev.waymark.workflow.internal;

import dev.waymark.workflow.status.WorkflowOutcome;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What an engine knows about the runs it executes itself: which are under way and who waits for
 * their end. Lets a handle in the same process learn a run's end without reading the instance row.
 *
 * <p>Nothing is remembered after a run's end: a handle that starts waiting after it reads the row.
 * (An earlier version remembered final outcomes for a minute, and a handle could then be given the
 * outcome of an instance that another process had garbage-collected and started anew under the
 * same id.)
 */
public final class LocalRuns {

    private final Map<Instances.Key, List<CompletableFuture<WorkflowOutcome<?>>>> watchers = new ConcurrentHashMap<>();
    /** Runs under way per instance (a new run may be submitted before an old one has ended). */
    private final Map<Instances.Key, Integer> underWay = new ConcurrentHashMap<>();

    /** A future completed with the run's terminal outcome if a run here ends it. */
    public CompletableFuture<WorkflowOutcome<?>> watch(Instances.Key key) {
        CompletableFuture<WorkflowOutcome<?>> watcher = new CompletableFuture<>();
        watchers.computeIfAbsent(key, k -> new CopyOnWriteArrayList<>()).add(watcher);
        return watcher;
    }

    /** Stops watching. */
    public void unwatch(Instances.Key key, CompletableFuture<WorkflowOutcome<?>> watcher) {
        watchers.computeIfPresent(key, (k, list) -> {
            list.remove(watcher);
            return list.isEmpty() ? null : list;
        });
    }

    /** A run of {@code key} was handed to this engine's executor. */
    public void submitted(Instances.Key key) {
        underWay.merge(key, 1, Integer::sum);
    }

    /** Whether a run of {@code key} is under way here: its end will complete the watchers. */
    public boolean isUnderWay(Instances.Key key) {
        return underWay.containsKey(key);
    }

    /**
     * A run of {@code key} ended here with {@code outcome} (null: an attempt that did not end the
     * workflow). The run stops counting as under way before the watchers hear of a terminal end, so
     * a handle that starts watching after them finds no run here and reads the (committed) row.
     */
    public void ended(Instances.Key key, WorkflowOutcome<?> outcome) {
        underWay.computeIfPresent(key, (k, n) -> n == 1 ? null : n - 1);
        notifyEnd(key, outcome);
    }

    /**
     * A run of {@code key} not submitted through {@link #submitted} (a resume worker's) ended with
     * {@code outcome}: a terminal end completes the watchers.
     */
    public void notifyEnd(Instances.Key key, WorkflowOutcome<?> outcome) {
        if (outcome != null && outcome.isTerminal()) {
            List<CompletableFuture<WorkflowOutcome<?>>> waiting = watchers.remove(key);
            if (waiting != null) {
                waiting.forEach(w -> w.complete(outcome));
            }
        }
    }
}
