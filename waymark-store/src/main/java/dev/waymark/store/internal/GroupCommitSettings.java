package dev.waymark.store.internal;

import dev.waymark.store.AppendBatchListener;

/**
 * Group commit of appends, validated by the store builder.
 *
 * @param enabled whether concurrent appends that commit on their own share transactions
 * @param maxAppends the most appends in one batch
 * @param maxBytes the most estimated bytes in one batch (a single larger append still goes alone)
 * @param maxInFlight how many batches may be in flight at once
 * @param listener hears of every batch
 */
public record GroupCommitSettings(
        boolean enabled, int maxAppends, long maxBytes, int maxInFlight, AppendBatchListener listener) {}
