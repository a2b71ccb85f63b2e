package dev.waymark.workflow.internal;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Cancellations heard of (a broadcast from whichever process cancelled), so that a run under way
 * in this process stops before its next fresh step instead of running the step's action only to
 * have its journal write refused. A notice is a hint: the run confirms it against the instance row
 * before it stops, and a lost notice costs only that extra action. A notice is kept even when no
 * run of the instance has begun here yet (a cancel right after a start may be heard before its run
 * begins); it goes when the instance's last run here ends, and notices of instances that never ran
 * here are dropped once they are a minute old and more than {@value #PRUNE_ABOVE} are kept.
 */
public final class CancelNotices {

    /** One hearing of a cancellation; compared by identity, so a later hearing is another notice. */
    static final class Notice {
        private final long heardAt;

        private Notice(long heardAt) {
            this.heardAt = heardAt;
        }
    }

    static final int PRUNE_ABOVE = 1_024;
    private static final long KEEP_NANOS = 60_000_000_000L;

    private final Map<Instances.Key, Integer> running = new ConcurrentHashMap<>();
    private final Map<Instances.Key, Notice> noticed = new ConcurrentHashMap<>();
    private final LongSupplier nanoTime;
    /** Told of every cancellation heard of (a run waiting in memory for it ends its wait). */
    private volatile java.util.function.Consumer<Instances.Key> heard = key -> {};

    /** Notices on the system's monotonic clock. */
    public CancelNotices() {
        this(System::nanoTime);
    }

    /** Notices on {@code nanoTime} (tests). */
    CancelNotices(LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
    }

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

    /** Tells {@code listener} of every cancellation heard of from now on (one listener; the last set wins). */
    public void onCancelled(java.util.function.Consumer<Instances.Key> listener) {
        this.heard = listener;
    }

    /** {@code key} was cancelled somewhere. */
    public void cancelled(Instances.Key key) {
        long now = nanoTime.getAsLong();
        noticed.put(key, new Notice(now));
        heard.accept(key);
        if (noticed.size() > PRUNE_ABOVE) {
            noticed.entrySet()
                    .removeIf(e -> now - e.getValue().heardAt > KEEP_NANOS && !running.containsKey(e.getKey()));
        }
    }

    /** The notice of a cancellation of {@code key} heard of and not yet {@link #clear cleared}, or null. */
    Notice notice(Instances.Key key) {
        return noticed.isEmpty() ? null : noticed.get(key);
    }

    /** Whether a cancellation of {@code key} was heard of and not yet {@link #clear cleared} (for tests). */
    boolean isNoticed(Instances.Key key) {
        return notice(key) != null;
    }

    /**
     * Forgets {@code notice} of {@code key} (the instance row, read after it was heard, showed the
     * instance is not terminal); a notice heard since then stays.
     */
    void clear(Instances.Key key, Notice notice) {
        noticed.remove(key, notice);
    }

    /** How many notices are kept (for tests). */
    int size() {
        return noticed.size();
    }
}
