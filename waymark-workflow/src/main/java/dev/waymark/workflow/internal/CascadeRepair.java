package dev.waymark.workflow.internal;

import java.time.Duration;
import java.util.function.BiConsumer;
import java.util.function.BiPredicate;
import java.util.function.Consumer;

/**
 * Finishes cancellation cascades a crash cut short. A cancellation commits the parent's marker
 * first and cancels the live children after it, each in a transaction of its own, so a process that
 * dies in between leaves children running under a cancelled parent. Now and then this asks for such
 * children and cancels each (its own cascade then goes on down the tree).
 */
public final class CascadeRepair {

    private final Instances instances;
    private final BiPredicate<String, String> cancel;
    private final long intervalNanos;
    private final int limit;
    private long next = System.nanoTime();

    /**
     * Repairs at most {@code limit} children per run, first at the first {@link #runIfDue} call and
     * then at most every {@code interval}, cancelling each through {@code cancel} (name, id; true
     * when that call cancelled it, false when it was terminal already).
     */
    public CascadeRepair(Instances instances, BiPredicate<String, String> cancel, Duration interval, int limit) {
        this.instances = instances;
        this.cancel = cancel;
        this.intervalNanos = interval.toNanos();
        this.limit = limit;
    }

    /**
     * When a run is due, cancels the live children of cancelled instances: {@code cancelled} hears of
     * each child this call cancelled, {@code failed} of each whose cancellation threw (the others go
     * on; the next run tries it again). Not thread-safe: one caller (a worker's loop).
     *
     * @throws RuntimeException if the children could not be read (the next run is still scheduled)
     */
    public void runIfDue(Consumer<Queries.Orphan> cancelled, BiConsumer<Queries.Orphan, RuntimeException> failed) {
        long now = System.nanoTime();
        if (now - next < 0) {
            return;
        }
        next = now + intervalNanos;
        for (Queries.Orphan o : instances.queries().orphanedChildren(limit)) {
            try {
                if (cancel.test(o.child().name(), o.child().id())) {
                    cancelled.accept(o);
                }
            } catch (RuntimeException e) {
                failed.accept(o, e);
            }
        }
    }
}
