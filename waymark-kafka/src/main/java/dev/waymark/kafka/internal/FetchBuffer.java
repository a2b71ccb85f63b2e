package dev.waymark.kafka.internal;

import java.util.ArrayDeque;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * The {@link AckLedger}'s fetch buffer and its flow control: fetching pauses when the buffer is
 * full and resumes once it has drained to half. Guarded by the ledger's lock; not thread-safe.
 */
final class FetchBuffer {

    /** A fetched record, stamped with the partition's generation and seek epoch at fetch time. */
    record Buffered(ConsumerRecord<byte[], byte[]> record, PartitionState state, long generation, long epoch) {}

    private final ArrayDeque<Buffered> buffer = new ArrayDeque<>();
    private final int capacity;
    private final int lowWater;
    private boolean flowPaused;

    FetchBuffer(int capacity) {
        this.capacity = capacity;
        this.lowWater = capacity / 2;
    }

    void add(Buffered b) {
        buffer.addLast(b);
    }

    /** The oldest buffered record, or null. */
    Buffered poll() {
        return buffer.pollFirst();
    }

    /** Drops the records of partitions given up. */
    void drop(Set<TopicPartition> gone) {
        buffer.removeIf(b -> gone.contains(b.state().partition()));
    }

    void clear() {
        buffer.clear();
    }

    /** Whether fetching must pause now: a full buffer pauses it, one drained to half resumes it. */
    boolean flowPaused() {
        if (buffer.size() >= capacity) {
            flowPaused = true;
        } else if (buffer.size() <= lowWater) {
            flowPaused = false;
        }
        return flowPaused;
    }

    /** After a take: whether fetching was paused and may resume now (the buffer drained to half). */
    boolean resumedByTake() {
        if (flowPaused && buffer.size() <= lowWater) {
            flowPaused = false;
            return true;
        }
        return false;
    }
}
