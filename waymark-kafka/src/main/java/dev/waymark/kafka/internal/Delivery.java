package dev.waymark.kafka.internal;

import org.apache.kafka.common.TopicPartition;

/**
 * One hand-out of a record to the processor. Its acknowledgement counts only while the partition's
 * assignment generation is unchanged and no retry seek has superseded it. Mutable fields are
 * guarded by the {@link AckLedger}'s lock.
 */
final class Delivery {

    final TopicPartition partition;
    final long offset;
    final long generation;
    boolean acked;
    boolean superseded;

    Delivery(TopicPartition partition, long offset, long generation) {
        this.partition = partition;
        this.offset = offset;
        this.generation = generation;
    }
}
