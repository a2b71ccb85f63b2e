package dev.waymark.kafka.internal;

import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * A record's place in its partition's commit order, from its first hand-out (or its first hold
 * behind a retry barrier) until the commit point passes it. A retried record keeps its slot while it
 * is held and redelivered, so the commit never moves past it in the meantime. Written under the
 * {@link AckLedger}'s lock.
 */
final class Slot {

    final long offset;
    final ConsumerRecord<byte[], byte[]> record;
    /** Acknowledged for good (ok, dead letter): the commit point may pass it. */
    boolean acked;
    /** Its current hand-out, or null while it is held behind a retry barrier. */
    Delivery delivery;

    Slot(ConsumerRecord<byte[], byte[]> record) {
        this.record = record;
        this.offset = record.offset();
    }

    /** What holding it costs: key and value bytes plus a fixed per-record overhead. */
    long bytes() {
        return RetryHold.RECORD_OVERHEAD_BYTES + Math.max(0, record.serializedKeySize())
                + Math.max(0, record.serializedValueSize());
    }
}
