package dev.waymark.workflow.internal;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Cancellations heard of (a broadcast from whichever process cancelled) for instances whose runs
 * are under way in this process, so that a run stops before its next fresh step instead of running
 * the step's action only to have its journal write refused. A notice is a hint: the run confirms
 * it against the instance row before it stops, and a lost notice costs only that extra action.
 */
public final class CancelNotices {

    private final Map<Instances.Key, Integer> running = new ConcurrentHashMap<>();
    private final Set<Instances.Key> noticed = ConcurrentHashMap.newKeySet();

    /** A run of {@code key} begins here. */
    void runStarted(Instances.Key key) {
        running.merge(key, 1, Integer::sum);
    }

    /** A run of {@code key} ended here; with no other run of it left, its notice goes too. */
    void runEnded(Instances.Key key) {
        if (running.computeIfPresent(key, (k, n) -> n == 1 ? null : n - 1) == null) {
            noticed.remove(key);
        }
    }

    /** {@code key} was cancelled somewhere; remembered only while a run of it is under way here. */
    public void cancelled(Instances.Key key) {
        if (running.containsKey(key)) {
            noticed.add(key);
        }
    }

    /** Whether a cancellation of {@code key} was heard of and not yet {@link #clear cleared}. */
    boolean isNoticed(Instances.Key key) {
        return !noticed.isEmpty() && noticed.contains(key);
    }

    /** Forgets the notice of {@code key} (the instance row showed it is not terminal). */
    void clear(Instances.Key key) {
        noticed.remove(key);
    }
}
