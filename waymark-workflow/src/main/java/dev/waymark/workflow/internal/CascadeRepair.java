package dev.waymark.workflow.internal;

import java.time.Duration;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * Finishes cancellation cascades a crash cut short. A cancellation commits the parent's marker
 * first and cancels the live children after it, each in a transaction of its own, so a process that
 * dies in between leaves children running under a cancelled parent. Now and then this asks for such
 * children and cancels each (its own cascade then goes on down the tree).
 */
public final class CascadeRepair {

    private final Instances instances;
    private final BiConsumer<String, String> cancel;
    private final long intervalNanos;
    private final int limit;
    private long next = System.nanoTime();

    /**
     * Repairs at most {@code limit} children per run, first at the first {@link #runIfDue} call and
     * then at most every {@code interval}, cancelling each through {@code cancel} (name, id).
     */
    public CascadeRepair(Instances instances, BiConsumer<String, String> cancel, Duration interval, int limit) {
        this.instances = instances;
        this.cancel = cancel;
        this.intervalNanos = interval.toNanos();
        this.limit = limit;
    }

    /**
     * When a run is due, cancels the live children of cancelled instances and returns them (parent
     * first); otherwise returns an empty list. Not thread-safe: one caller (a worker's loop).
     */
    public List<Instances.Orphan> runIfDue() {
        long now = System.nanoTime();
        if (now - next < 0) {
            return List.of();
        }
        next = now + intervalNanos;
        List<Instances.Orphan> orphans = instances.orphanedChildren(limit);
        for (Instances.Orphan o : orphans) {
            cancel.accept(o.child().name(), o.child().id());
        }
        return orphans;
    }
}
