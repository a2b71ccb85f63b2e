package dev.waymark.kafka.internal;

import java.util.ArrayDeque;

/**
 * The records of one partition held behind one retry barrier, in offset order: the retried record
 * first, then the records its processor orders after it (the whole partition, or its key) that were
 * handed out after it or fetched since. They are redelivered from memory once the retry delay ends.
 * Written under the {@link AckLedger}'s lock.
 */
final class Lane {

    final PartitionState owner;
    /** Its key in the partition's lanes (a {@link LaneKeys} key, or the retried slot for a lane of its own). */
    final Object key;
    final ArrayDeque<Slot> queue = new ArrayDeque<>();
    /** {@link System#nanoTime()} at which the retry delay ends. */
    long readyAt;
    /** Bumped on every (re)schedule: an older entry in the waiting queue is stale. */
    int version;
    /** In its retry delay. */
    boolean waiting;
    /** Queued among the ready lanes. */
    boolean inReady;
    /** Drained, dropped by a revoke or a seek: nothing of it is handed out any more. */
    boolean dead;

    Lane(PartitionState owner, Object key) {
        this.owner = owner;
        this.key = key;
    }
}
