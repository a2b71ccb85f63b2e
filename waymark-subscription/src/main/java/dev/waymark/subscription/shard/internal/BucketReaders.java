package dev.waymark.subscription.shard.internal;

import java.util.Collection;
import java.util.Set;
import java.util.TreeSet;

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

    /**
     * Stops the bucket's reader and waits for it; its in-flight delivery is not acknowledged.
     *
     * @return false when the reader did not end within the stop's bound (a handler that ignores its
     *     interrupt): it is then {@linkplain #draining() draining}
     */
    boolean stop(int bucket);

    /**
     * Stops the readers of {@code buckets} and waits for all of them. Readers that stop at once
     * should stop side by side, so that the wait is that of the slowest, not the sum; by default
     * they stop one by one. A bucket already {@linkplain #draining() draining} is not waited for.
     *
     * @return the buckets whose readers are still draining afterwards
     */
    default Set<Integer> stop(Collection<Integer> buckets) {
        Set<Integer> draining = new TreeSet<>();
        for (int b : buckets) {
            if (!stop(b)) {
                draining.add(b);
            }
        }
        draining.addAll(buckets.stream().filter(draining()::contains).toList());
        return draining;
    }

    /**
     * Buckets whose readers were stopped but have not ended yet (a handler that ignored its
     * interrupt). No new reader may start there, and the bucket's lease must not be given up while
     * it drains: the next owner would run the bucket's events beside the stuck handler.
     */
    default Set<Integer> draining() {
        return Set.of();
    }
}
