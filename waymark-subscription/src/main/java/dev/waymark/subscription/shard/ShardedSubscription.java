package dev.waymark.subscription.shard;

import dev.waymark.core.Stoppable;
import dev.waymark.store.EventStore;
import dev.waymark.subscription.Target;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * One worker of a sharded subscription pool. Start the same worker N times (threads,
 * JVMs, hosts) with the same subscription name and options: the workers split the target into a
 * fixed number of buckets (consumer-group members) and share them through lease rows in
 * PostgreSQL, with no coordinator. Each owned bucket is read by its own subscription, one event at
 * a time, resuming from the bucket's checkpoint; checkpoint writes are fenced by the bucket's lease
 * epoch, so a worker that lost a lease cannot move progress. A crashed worker's buckets are taken
 * over after their leases expire; a stopped one releases them at once.
 */
public interface ShardedSubscription extends Stoppable {

    /** Every bucket's lease of the pool {@code name} as stored now (for operators; no worker needed). */
    static List<ShardOwnership> ownership(EventStore store, String name) {
        dev.waymark.subscription.internal.Names.requireArgument("pool name", name);
        return new dev.waymark.subscription.shard.internal.LeaseStore(store, name, 1, Duration.ofSeconds(1))
                .snapshot();
    }

    /**
     * Releases every bucket of {@code workerId} in the pool {@code name} and removes its membership,
     * so live workers take the buckets over at once (for a worker known to be dead). A worker that is
     * in fact alive loses the buckets: its fenced checkpoint writes fail and it reclaims its share.
     * All or nothing, in one transaction whose lock waits are bounded by the store's
     * {@code internalTransactionTimeout}: a lease row locked by another transaction (a worker frozen
     * inside one, which the server ends within that bound) makes it fail rather than wait, with
     * nothing released and no row left locked.
     *
     * @return the buckets that were released, ascending
     * @throws ShardReleaseTimeoutException when a lease row stayed locked for the whole bound; retry
     * @throws dev.waymark.store.InvalidInputException when the name or worker id holds a control or
     *     invisible character
     */
    static List<Integer> release(EventStore store, String name, String workerId) {
        dev.waymark.subscription.internal.Names.requireArgument("pool name", name);
        dev.waymark.subscription.internal.Names.requireArgument("worker id", workerId);
        return new dev.waymark.subscription.shard.internal.LeaseStore(store, name, 1, Duration.ofSeconds(1))
                .release(workerId);
    }

    /** A builder for a worker of the pool {@code name} over {@code target}. */
    static ShardedSubscriptionBuilder builder(EventStore store, String name, Target target) {
        return new ShardedSubscriptionBuilder(store, name, target);
    }

    /** This worker's id (fresh per start, so a restart never inherits leases). */
    String workerId();

    /**
     * The buckets this worker holds now; it reads each of them, except a bucket whose stopped reader
     * has not ended yet (see {@link ShardListener#readerStuck}), which it holds without a new reader.
     */
    Set<Integer> ownedBuckets();

    /** Every bucket's lease as stored now. */
    List<ShardOwnership> ownership();

    /** Counters since start. */
    ShardStats stats();

    /** Whether the worker is running. */
    boolean isRunning();

    /**
     * Stops: ends the pass loop, stops every reader (letting in-flight deliveries finish for up to
     * {@code grace}; an interrupted one is not acknowledged), then releases all leases so other
     * workers take the buckets over at once. The lease of a bucket whose reader did not end (a
     * handler that ignores its interrupt, see {@link ShardListener#readerStuck}) is not released: it
     * runs out after the lease TTL, so no other worker starts on the bucket sooner. The pass loop
     * gets {@code grace} plus 10 s to end. {@link #close()} is {@code stop(30 s)}.
     *
     * @return whether the pass loop and every reader had ended when the call returned ({@code false}
     *     when a handler ignored its interrupt)
     * @throws IllegalArgumentException if {@code grace} is null or negative
     */
    @Override
    boolean stop(Duration grace);
}
