package dev.waymark.subscription.shard;

import dev.waymark.subscription.SubscriptionException;
import java.io.Serial;
import java.time.Duration;

/**
 * {@link ShardedSubscription#release} could not lock the worker's lease rows within the bound of
 * Waymark's transactions ({@code EventStoreBuilder.internalTransactionTimeout}): another
 * transaction holds one of them. Nothing was released (the release is all or nothing) and no row
 * is left locked. Retrying is safe: a worker frozen inside one of its own transactions has it ended
 * by the server within that bound; a lock held by another session (an administrator's
 * {@code SELECT ... FOR UPDATE}) must be ended first.
 */
public final class ShardReleaseTimeoutException extends SubscriptionException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final String pool;
    private final String workerId;
    private final Duration bound;

    /** Releasing {@code workerId}'s buckets of {@code pool} waited {@code bound} for a lock. */
    public ShardReleaseTimeoutException(String pool, String workerId, Duration bound, Throwable cause) {
        super("releasing the buckets of worker " + workerId + " in sharded pool '" + pool + "' timed out: its lease"
                + " rows could not be locked within " + bound.toMillis() + " ms (EventStoreBuilder"
                + ".internalTransactionTimeout), so nothing was released. Another transaction holds one of them:"
                + " the worker itself, frozen inside a transaction (the server ends it within that bound, so try"
                + " again), or another session (find it with SELECT pid, state, xact_start, query FROM"
                + " pg_stat_activity WHERE backend_xid IS NOT NULL ORDER BY xact_start, and end it)", cause);
        this.pool = pool;
        this.workerId = workerId;
        this.bound = bound;
    }

    /** The pool. */
    public String pool() {
        return pool;
    }

    /** The worker whose buckets were to be released. */
    public String workerId() {
        return workerId;
    }

    /** How long the release waited for the locks. */
    public Duration bound() {
        return bound;
    }

    /** Always true: nothing was applied, and the lock is likely gone soon. */
    @Override
    public boolean isRetryable() {
        return true;
    }
}
