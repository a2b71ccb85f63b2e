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

    /**
     * A bucket's reader ended on its own, not asked to stop (on the reader's thread, as it ends):
     * {@code cause} is what stopped it (a database error that is not retryable, a lost lease found
     * by a fenced checkpoint write, an {@link Error} such as an {@code OutOfMemoryError} from the
     * handler), or null if it ended without one. The next pass restarts it if the bucket is still
     * held, and reports {@link #readerRestarted}.
     */
    default void readerDied(String workerId, int bucket, Throwable cause) {}

    /** A bucket's reader had died (see {@link #readerDied}) and was restarted by a pass. */
    default void readerRestarted(String workerId, int bucket, Throwable cause) {}

    /**
     * A bucket's reader was stopped (to shed the bucket, because its lease was lost, or to restart it
     * at a new epoch) and did not end: its handler was given the grace, was interrupted, and had not
     * returned after the grace once more (it ignores interrupts, or needs longer to end). Reported
     * once per stuck reader, by the pass or the worker's stop that stopped it. While it runs, no new reader starts for the
     * bucket here, and a bucket this worker still holds is not given up (its lease is renewed), so
     * that no other worker handles the bucket's events beside the stuck handler.
     */
    default void readerStuck(String workerId, int bucket) {}

    /**
     * The handler of {@code bucket} has been running on {@code event} for {@code running}, longer
     * than the pool's {@code stuckHandlerThreshold}, with no stop requested: the bucket makes no
     * progress (its lease is still renewed). Reported once per delivery, on the reader's watchdog
     * thread, with one WARN line; counted in {@link ShardStats#stuckReaders()} until
     * {@link #handlerUnstuck}.
     */
    default void handlerStuck(String workerId, int bucket, dev.waymark.store.RecordedEvent event,
            java.time.Duration running) {}

    /** A handler reported by {@link #handlerStuck} returned (or threw) after {@code took}. */
    default void handlerUnstuck(String workerId, int bucket, dev.waymark.store.RecordedEvent event,
            java.time.Duration took) {}

    /**
     * A pass step failed ({@code heartbeat}, {@code count live workers}, {@code renew}, {@code claim},
     * {@code relinquish}); current readers keep running. The step {@code ensure shards} is the
     * creation of the bucket rows: when the database is unavailable as the worker starts, it is
     * reported here and retried by every pass, which claims nothing until it succeeds; a
     * {@link ShardCountMismatchException} found then is reported here too, and the worker stops.
     */
    default void passFailed(String workerId, String step, Throwable error) {}

    /** A pass finished; {@code owned} buckets are held and read. */
    default void passCompleted(String workerId, java.util.Set<Integer> owned, int liveWorkers) {}

    /** A listener that does nothing. */
    ShardListener NONE = new ShardListener() {};
}
