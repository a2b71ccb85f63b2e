package dev.waymark.workflow.internal;

import dev.waymark.workflow.WorkflowOutcome;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What an engine knows about the runs it executes itself: which are under way, who waits for their
 * end, and how the most recent ones ended for good. Lets a handle in the same process learn a run's
 * end without reading the instance row.
 */
public final class LocalRuns {

    /** How many final outcomes are remembered. */
    static final int REMEMBERED = 4096;

    /**
     * How long a final outcome is remembered. It serves handles that begin waiting just after the run
     * ended; past that they read the row, which also sees an instance that garbage collection
     * deleted and a new start re-created under the same id in another process.
     */
    static final long REMEMBER_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(60);

    /** A final outcome and when it was remembered ({@link System#nanoTime}). */
    private record Ended(WorkflowOutcome<?> outcome, long at) {}

    private final Map<Instances.Key, List<CompletableFuture<WorkflowOutcome<?>>>> watchers = new ConcurrentHashMap<>();
    private final Set<Instances.Key> underWay = ConcurrentHashMap.newKeySet();
    private final Map<Instances.Key, Ended> ended = new LinkedHashMap<>() {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<Instances.Key, Ended> eldest) {
            return size() > REMEMBERED;
        }
    };

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
        underWay.add(key);
    }

    /** Whether a run of {@code key} is under way here: its end will complete the watchers. */
    public boolean isUnderWay(Instances.Key key) {
        return underWay.contains(key);
    }

    /**
     * The run of {@code key} ended here with {@code outcome} (null: an attempt that did not end the
     * workflow). Final outcomes (completed, cancelled: nothing turns them back) are remembered
     * before the watchers hear of them, so a handle that starts watching later still finds them.
     */
    public void ended(Instances.Key key, WorkflowOutcome<?> outcome) {
        if (outcome instanceof WorkflowOutcome.Completed<?> || outcome instanceof WorkflowOutcome.Cancelled<?>) {
            synchronized (ended) {
                ended.put(key, new Ended(outcome, System.nanoTime()));
            }
        }
        if (outcome != null && outcome.isTerminal()) {
            List<CompletableFuture<WorkflowOutcome<?>>> waiting = watchers.remove(key);
            if (waiting != null) {
                waiting.forEach(w -> w.complete(outcome));
            }
        }
        underWay.remove(key);
    }

    /** The final outcome of {@code key} remembered in the last minute, or null. */
    public WorkflowOutcome<?> finalOutcome(Instances.Key key) {
        synchronized (ended) {
            Ended e = ended.get(key);
            return e == null || System.nanoTime() - e.at() > REMEMBER_NANOS ? null : e.outcome();
        }
    }

    /** Forgets the final outcome of {@code key}: its instance was deleted, or a new one created. */
    public void forget(Instances.Key key) {
        synchronized (ended) {
            ended.remove(key);
        }
    }
}
