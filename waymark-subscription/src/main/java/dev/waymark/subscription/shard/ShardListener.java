package dev.waymark.subscription.shard;

/**
 * Observes a sharded worker (metrics, logs, test conditions). Called on the worker's threads;
 * keep it fast. Exceptions thrown by a listener are logged and ignored.
 */
public interface ShardListener {

    /** This worker claimed a bucket at a new epoch. */
    default void claimed(String workerId, int bucket, long epoch) {}

    /** This worker gave a bucket up to rebalance (its reader was stopped first). */
    default void shed(String workerId, int bucket) {}

    /** This worker found a bucket it ran no longer leased to it (expired or taken over). */
    default void lost(String workerId, int bucket) {}

    /** A bucket's reader had died and was restarted. */
    default void readerRestarted(String workerId, int bucket, Throwable cause) {}

    /** A pass step failed (heartbeat, renew, claim, snapshot); current readers keep running. */
    default void passFailed(String workerId, String step, Throwable error) {}

    /** A pass finished; {@code owned} buckets are held and read. */
    default void passCompleted(String workerId, java.util.Set<Integer> owned, int liveWorkers) {}

    /** A listener that does nothing. */
    ShardListener NONE = new ShardListener() {};
}
