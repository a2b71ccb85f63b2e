package dev.waymark.kafka.internal;

import dev.waymark.kafka.KafkaSourceEvent.Kind;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
/**
 * The state of the {@link AckLedger} and its consumer-thread side: assignment, fetching into the
 * buffer, seeks, pauses and commits. The processor-thread side (hand-out and acknowledgements) is
 * {@link AckLedger}'s; the rules of both are in its javadoc. Every field is guarded by {@link #lock}.
 */
abstract sealed class LedgerCore permits AckLedger {

    static final Logger log = LoggerFactory.getLogger(AckLedger.class);

    final ReentrantLock lock = new ReentrantLock();
    final Condition available = lock.newCondition();
    final Map<TopicPartition, PartitionState> partitions = new HashMap<>();
    final FetchBuffer buffer;
    final Events events;
    final Runnable wakeConsumer;
    final RetryHold hold;
    /** Set once, by the processor, before the first hand-out. */
    volatile LaneKeys laneKeys = LaneKeys.SERIAL;
    boolean handoutClosed;
    int outstanding;

    LedgerCore(int bufferSize, long retryHoldBytes, Events events, Runnable wakeConsumer) {
        this.hold = new RetryHold(retryHoldBytes);
        this.buffer = new FetchBuffer(bufferSize);
        this.events = events;
        this.wakeConsumer = wakeConsumer;
    }

    /** What a retry holds back, from the processor's concurrency (serial until told). */
    void laneKeys(LaneKeys keys) {
        this.laneKeys = keys;
    }

    /** Records held behind retry barriers now. */
    int heldRecords() {
        lock.lock();
        try {
            return hold.records();
        } finally {
            lock.unlock();
        }
    }

    // ---- consumer thread -------------------------------------------------------------------

    /** Partitions assigned: each starts a new generation. */
    void assign(Collection<TopicPartition> assigned) {
        PendingEvents out = new PendingEvents();
        lock.lock();
        try {
            for (TopicPartition tp : assigned) {
                PartitionState ps = partitions.computeIfAbsent(tp, t -> new PartitionState(t, hold));
                if (!ps.assigned) {
                    outstanding -= ps.newGeneration(true);
                }
                out.add(Kind.ASSIGNED, tp, ps.generation, null);
            }
        } finally {
            lock.unlock();
            out.emitTo(events);
        }
    }

    /**
     * Partitions revoked (or lost): advances their generation and drops their buffered records.
     *
     * @return the acknowledged offsets not yet committed (to commit before giving them up)
     */
    Map<TopicPartition, OffsetAndMetadata> revoke(Collection<TopicPartition> revoked) {
        lock.lock();
        try {
            Map<TopicPartition, OffsetAndMetadata> toCommit = new HashMap<>();
            Set<TopicPartition> gone = new HashSet<>(revoked);
            for (TopicPartition tp : revoked) {
                PartitionState ps = partitions.get(tp);
                if (ps == null) {
                    continue;
                }
                long uncommitted = ps.uncommitted();
                if (uncommitted >= 0) {
                    toCommit.put(tp, new OffsetAndMetadata(uncommitted));
                }
                outstanding -= ps.newGeneration(false);
            }
            buffer.drop(gone);
            return toCommit;
        } finally {
            lock.unlock();
        }
    }

    /** Buffers a poll's records, dropping those a pending seek, halt or revoke made stale. */
    void accept(ConsumerRecords<byte[], byte[]> records) {
        PendingEvents out = new PendingEvents();
        lock.lock();
        try {
            boolean added = false;
            for (TopicPartition tp : records.partitions()) {
                PartitionState ps = partitions.get(tp);
                if (ps == null || !ps.fetchable()) {
                    continue; // from before a seek that is not applied yet, or of a halted/revoked partition
                }
                for (ConsumerRecord<byte[], byte[]> record : records.records(tp)) {
                    long expected = ps.expectReplay;
                    PartitionState.Admission admission = ps.admit(record.offset());
                    if (admission == PartitionState.Admission.DROP) {
                        continue;
                    }
                    if (admission == PartitionState.Admission.ACCEPT_AFTER_GAP) {
                        log.warn("kafka source '{}': retried offset {} of {} no longer exists (retention or"
                                + " compaction); continuing from {}", events.source(), expected, tp, record.offset());
                        out.add(Kind.RETENTION_GAP, tp, record.offset(), "expected " + expected);
                    }
                    buffer.add(new FetchBuffer.Buffered(record, ps, ps.generation, ps.epoch));
                    added = true;
                }
            }
            if (added) {
                available.signalAll();
            }
        } finally {
            lock.unlock();
            out.emitTo(events);
        }
    }

    /** Takes the pending retry seeks (partition to offset), for the consumer thread to apply outside the lock. */
    Map<TopicPartition, Long> takeSeeks() {
        lock.lock();
        try {
            Map<TopicPartition, Long> seeks = new HashMap<>();
            for (PartitionState ps : partitions.values()) {
                long target = ps.takeSeek();
                if (target >= 0) {
                    seeks.put(ps.partition(), target);
                }
            }
            return seeks;
        } finally {
            lock.unlock();
        }
    }

    /** The assigned partitions that must be paused now: halted, in a retry delay, or the buffer is full. */
    Set<TopicPartition> pausedWanted(long now, boolean stopping) {
        lock.lock();
        try {
            boolean flowPaused = buffer.flowPaused();
            Set<TopicPartition> out = new HashSet<>();
            for (PartitionState ps : partitions.values()) {
                if (ps.assigned && (ps.pauseWanted(now) || stopping || flowPaused)) {
                    out.add(ps.partition());
                }
            }
            return out;
        } finally {
            lock.unlock();
        }
    }

    /** Nanoseconds until the earliest retry delay ends, or {@code max} if none ends sooner. */
    long nanosUntilRetryResume(long now, long max) {
        lock.lock();
        try {
            long wait = max;
            for (PartitionState ps : partitions.values()) {
                wait = ps.nanosUntilResume(now, wait);
            }
            return wait;
        } finally {
            lock.unlock();
        }
    }

    /** Acknowledged offsets of assigned partitions not committed yet. */
    Map<TopicPartition, OffsetAndMetadata> committable() {
        lock.lock();
        try {
            Map<TopicPartition, OffsetAndMetadata> out = new HashMap<>();
            partitions.forEach((tp, ps) -> {
                long uncommitted = ps.uncommitted();
                if (uncommitted >= 0) {
                    out.put(tp, new OffsetAndMetadata(uncommitted));
                }
            });
            return out;
        } finally {
            lock.unlock();
        }
    }

    /** Records a successful commit. */
    void committed(Map<TopicPartition, OffsetAndMetadata> offsets) {
        PendingEvents out = new PendingEvents();
        lock.lock();
        try {
            offsets.forEach((tp, om) -> {
                PartitionState ps = partitions.get(tp);
                if (ps != null && ps.assigned) {
                    ps.committed = Math.max(ps.committed, om.offset());
                }
                out.add(Kind.COMMITTED, tp, om.offset(), null);
            });
        } finally {
            lock.unlock();
            out.emitTo(events);
        }
    }

    /** The committed (or, before the first commit, starting) position of each assigned partition, -1 if unknown. */
    Map<TopicPartition, Long> committedPositions() {
        lock.lock();
        try {
            Map<TopicPartition, Long> out = new HashMap<>();
            partitions.forEach((tp, ps) -> {
                if (ps.assigned) {
                    out.put(tp, ps.committed >= 0 ? ps.committed : ps.startOffset);
                }
            });
            return out;
        } finally {
            lock.unlock();
        }
    }

    /** Stops handing out records (shutdown or failure); buffered ones are discarded, uncommitted. */
    void closeHandout() {
        lock.lock();
        try {
            handoutClosed = true;
            buffer.clear();
            available.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Whether {@link #closeHandout()} was called: {@link #next} hands nothing out again. */
    boolean handoutClosed() {
        lock.lock();
        try {
            return handoutClosed;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Handed-out deliveries that still count and whose acknowledgement has not completed. A
     * delivery fenced by a retry or a revoke no longer counts: its acknowledgement would do nothing,
     * and the runtime skips it without acknowledging it if it has not started.
     */
    int outstanding() {
        lock.lock();
        try {
            return outstanding;
        } finally {
            lock.unlock();
        }
    }
}
