package dev.waymark.store;

/**
 * Hears of every group commit of an {@link EventStore} (see
 * {@link EventStoreBuilder#groupCommit(boolean)}); for metrics (see
 * {@code dev.waymark.store.micrometer.StoreMetrics#appendBatches}) and tests. Called on the thread
 * of one of the batch's callers, after the batch's transaction ended and before any caller of the
 * batch returns: keep it quick. An exception it throws is logged and ignored.
 */
@FunctionalInterface
public interface AppendBatchListener {

    /** A listener that does nothing: the default. */
    AppendBatchListener NONE = batch -> {};

    /**
     * A batch ended: it committed ({@code batch.committed()} appends written, possibly none when
     * every append failed its condition or was handed back), or it failed as a whole and wrote
     * nothing, its appends then {@link AppendBatch#appendedAlone() appended alone} or failed.
     */
    void batchEnded(AppendBatch batch);
}
