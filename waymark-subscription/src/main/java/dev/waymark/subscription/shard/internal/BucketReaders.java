package dev.waymark.subscription.shard.internal;

import java.util.Collection;
import java.util.Set;

/** The readers a reconcile pass starts and stops, one per owned bucket. */
public interface BucketReaders {

    /** Buckets with a reader, alive or dead. */
    Set<Integer> running();

    /** Whether the bucket's reader is still running. */
    boolean isAlive(int bucket);

    /** Why the bucket's reader died, or null. */
    Throwable deathCause(int bucket);

    /** The lease epoch the bucket's reader fences its checkpoint writes with. */
    long epochOf(int bucket);

    /** Starts a reader for the bucket, fenced by {@code epoch}. */
    void start(int bucket, long epoch);

    /** Stops the bucket's reader and waits for it; its in-flight delivery is not acknowledged. */
    void stop(int bucket);

    /**
     * Stops the readers of {@code buckets} and waits for all of them. Readers that stop at once
     * should stop side by side, so that the wait is that of the slowest, not the sum; by default
     * they stop one by one.
     */
    default void stop(Collection<Integer> buckets) {
        buckets.forEach(this::stop);
    }
}
