package dev.waymark.kafka.internal;

import org.apache.kafka.common.TopicPartition;

/**
 * One hand-out of a record to the processor. Its acknowledgement counts only while the partition's
 * assignment generation is unchanged and no retry has superseded it. Mutable fields are
 * written under the {@link AckLedger}'s lock; {@link #isFenced()} reads without it.
 */
final class Delivery {

    final TopicPartition partition;
    final long offset;
    final long generation;
    /** The record's place in the commit order, kept across its redeliveries. */
    final Slot slot;
    private final PartitionState owner;
    boolean acked;
    volatile boolean superseded;
    /**
     * Its acknowledgement completed, or it was fenced: either way the ledger no longer counts it as
     * outstanding (a fenced delivery's acknowledgement does nothing, and the runtime skips one that
     * has not started).
     */
    boolean finished;

    Delivery(PartitionState owner, Slot slot) {
        this.owner = owner;
        this.partition = owner.partition();
        this.slot = slot;
        this.offset = slot.offset;
        this.generation = owner.generation;
    }

    /**
     * Whether it no longer counts: revoked, reassigned or superseded by a retry. Reads volatile
     * state without the ledger's lock (a hint checked before every handler call); the ledger's
     * locked checks stay authoritative for acknowledgements.
     */
    boolean isFenced() {
        return !owner.counts(this);
    }
}
