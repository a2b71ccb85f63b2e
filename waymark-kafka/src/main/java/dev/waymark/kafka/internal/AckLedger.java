package dev.waymark.kafka.internal;

import dev.waymark.kafka.KafkaSourceEvent.Kind;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The source's acknowledgement state machine and its fetch buffer, shared by the consumer thread
 * (which fetches, seeks, pauses, commits and rebalances) and the processor threads (which take
 * records and acknowledge them). Every transition happens under one lock; the lock is never held
 * across broker I/O.
 *
 * <p>Rules, per partition:
 * <ul>
 *   <li>Only the contiguous acknowledged prefix of what was handed out is committable, so
 *       out-of-order acknowledgements never commit past an unfinished record.</li>
 *   <li>A retry sets a barrier at its offset (the earliest outstanding one wins, since a retry of a
 *       later record was superseded by it), supersedes every delivery at or above it, and asks the
 *       consumer thread to seek there; buffered records above it are dropped and come back, in
 *       order, after the retried record. A superseded delivery's acknowledgement does nothing.</li>
 *   <li>A revoke or assign advances the generation: older handles can no longer acknowledge,
 *       retry or halt, and buffered records of the old generation are never handed out.</li>
 *   <li>A halt stops the commit point at the halted record and pauses the partition.</li>
 * </ul>
 */
final class AckLedger {

    private static final Logger log = LoggerFactory.getLogger(AckLedger.class);

    /** A fetched record, stamped with the partition's generation and seek epoch at fetch time. */
    record Buffered(ConsumerRecord<byte[], byte[]> record, TopicPartition partition, PartitionState state,
            long generation, long epoch) {}

    /** A record handed out, with its delivery, attempt and message-id prefix ({@code topic-partition}). */
    record Handout(ConsumerRecord<byte[], byte[]> record, Delivery delivery, int attempt, String partitionId) {}

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition available = lock.newCondition();
    private final Map<TopicPartition, PartitionState> partitions = new HashMap<>();
    private final ArrayDeque<Buffered> buffer = new ArrayDeque<>();
    private final int bufferSize;
    private final int lowWater;
    private final Events events;
    private final Runnable wakeConsumer;
    private boolean flowPaused;
    private boolean handoutClosed;
    private int outstanding;

    AckLedger(int bufferSize, Events events, Runnable wakeConsumer) {
        this.bufferSize = bufferSize;
        this.lowWater = bufferSize / 2;
        this.events = events;
        this.wakeConsumer = wakeConsumer;
    }

    // ---- consumer thread -------------------------------------------------------------------

    /** Partitions assigned: each starts a new generation. */
    void assign(Collection<TopicPartition> assigned) {
        lock.lock();
        try {
            for (TopicPartition tp : assigned) {
                PartitionState ps = partitions.computeIfAbsent(tp, k -> new PartitionState());
                if (!ps.assigned) {
                    ps.newGeneration(true);
                }
                events.emit(Kind.ASSIGNED, tp, ps.generation, null);
            }
        } finally {
            lock.unlock();
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
                if (ps.assigned && ps.commitCandidate > ps.committed) {
                    toCommit.put(tp, new OffsetAndMetadata(ps.commitCandidate));
                }
                ps.newGeneration(false);
            }
            buffer.removeIf(b -> gone.contains(b.partition()));
            return toCommit;
        } finally {
            lock.unlock();
        }
    }

    /** Buffers a poll's records, dropping those a pending seek, halt or revoke made stale. */
    void accept(ConsumerRecords<byte[], byte[]> records) {
        lock.lock();
        try {
            boolean added = false;
            for (TopicPartition tp : records.partitions()) {
                PartitionState ps = partitions.get(tp);
                if (ps == null || !ps.assigned || ps.haltedAt >= 0 || ps.pendingSeek >= 0) {
                    continue; // from before a seek that is not applied yet, or of a halted/revoked partition
                }
                for (ConsumerRecord<byte[], byte[]> record : records.records(tp)) {
                    long offset = record.offset();
                    if (ps.expectReplay >= 0) {
                        if (offset > ps.expectReplay) {
                            log.warn("kafka source '{}': retried offset {} of {} no longer exists (retention or"
                                    + " compaction); continuing from {}", events.source(), ps.expectReplay, tp, offset);
                            events.emit(Kind.RETENTION_GAP, tp, offset, "expected " + ps.expectReplay);
                        }
                        ps.expectReplay = -1;
                    } else if (offset < ps.nextOffset) {
                        continue; // never hand out below what this assignment already fetched
                    }
                    if (ps.startOffset < 0) {
                        ps.startOffset = offset;
                    }
                    ps.nextOffset = offset + 1;
                    buffer.addLast(new Buffered(record, tp, ps, ps.generation, ps.epoch));
                    added = true;
                }
            }
            if (added) {
                available.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Applies pending retry seeks with {@code seek}; returns how many. */
    int applySeeks(BiConsumer<TopicPartition, Long> seek) {
        lock.lock();
        try {
            int n = 0;
            for (Map.Entry<TopicPartition, PartitionState> e : partitions.entrySet()) {
                PartitionState ps = e.getValue();
                if (ps.assigned && ps.pendingSeek >= 0) {
                    seek.accept(e.getKey(), ps.pendingSeek);
                    events.emit(Kind.SEEK, e.getKey(), ps.pendingSeek, null);
                    ps.expectReplay = ps.pendingSeek;
                    ps.nextOffset = ps.pendingSeek;
                    ps.pendingSeek = -1;
                    n++;
                }
            }
            return n;
        } finally {
            lock.unlock();
        }
    }

    /** The assigned partitions that must be paused now: halted, in a retry delay, or the buffer is full. */
    Set<TopicPartition> pausedWanted(long now, boolean stopping) {
        lock.lock();
        try {
            if (buffer.size() >= bufferSize) {
                flowPaused = true;
            } else if (buffer.size() <= lowWater) {
                flowPaused = false;
            }
            Set<TopicPartition> out = new HashSet<>();
            for (Map.Entry<TopicPartition, PartitionState> e : partitions.entrySet()) {
                PartitionState ps = e.getValue();
                if (!ps.assigned) {
                    continue;
                }
                if (ps.retryPaused && now - ps.retryPausedUntil >= 0) {
                    ps.retryPaused = false;
                }
                if (stopping || flowPaused || ps.haltedAt >= 0 || ps.retryPaused) {
                    out.add(e.getKey());
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
                if (ps.assigned && ps.retryPaused) {
                    wait = Math.min(wait, Math.max(0, ps.retryPausedUntil - now));
                }
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
                if (ps.assigned && ps.commitCandidate > ps.committed) {
                    out.put(tp, new OffsetAndMetadata(ps.commitCandidate));
                }
            });
            return out;
        } finally {
            lock.unlock();
        }
    }

    /** Records a successful commit. */
    void committed(Map<TopicPartition, OffsetAndMetadata> offsets) {
        lock.lock();
        try {
            offsets.forEach((tp, om) -> {
                PartitionState ps = partitions.get(tp);
                if (ps != null && ps.assigned) {
                    ps.committed = Math.max(ps.committed, om.offset());
                }
                events.emit(Kind.COMMITTED, tp, om.offset(), null);
            });
        } finally {
            lock.unlock();
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

    /** Handed-out deliveries whose acknowledgement has not completed. */
    int outstanding() {
        lock.lock();
        try {
            return outstanding;
        } finally {
            lock.unlock();
        }
    }

    // ---- processor threads -----------------------------------------------------------------

    /** The next current record, waiting up to {@code timeout}; null if none. */
    Handout next(Duration timeout) throws InterruptedException {
        long nanos = timeout.toNanos();
        lock.lockInterruptibly();
        try {
            while (!handoutClosed) {
                Buffered b = buffer.pollFirst();
                if (b == null) {
                    if (nanos <= 0) {
                        return null;
                    }
                    nanos = available.awaitNanos(nanos);
                    continue;
                }
                if (flowPaused && buffer.size() <= lowWater) {
                    flowPaused = false;
                    wakeConsumer.run(); // resume fetching now rather than after the current poll
                }
                PartitionState ps = b.state(); // the same object for every generation of the partition
                if (!ps.assigned || ps.generation != b.generation() || ps.epoch != b.epoch() || ps.haltedAt >= 0) {
                    continue; // revoked, superseded by a seek, or halted since it was fetched
                }
                Delivery d = new Delivery(b.partition(), b.record().offset(), ps.generation);
                ps.inFlight.addLast(d);
                outstanding++;
                int attempt = ps.attempts.isEmpty() ? 0 : ps.attempts.getOrDefault(d.offset, 0);
                return new Handout(b.record(), d, attempt, ps.id(b.partition()));
            }
            return null;
        } finally {
            lock.unlock();
        }
    }

    /** Whether the delivery still counts (same generation, not superseded). */
    boolean isCurrent(Delivery d) {
        lock.lock();
        try {
            return current(d) != null;
        } finally {
            lock.unlock();
        }
    }

    private PartitionState current(Delivery d) {
        PartitionState ps = partitions.get(d.partition);
        return ps != null && ps.assigned && ps.generation == d.generation && !d.superseded ? ps : null;
    }

    /** Marks the delivery acknowledged; returns false (and does nothing) if it no longer counts. */
    boolean ack(Delivery d) {
        lock.lock();
        try {
            PartitionState ps = current(d);
            if (ps == null) {
                return false;
            }
            d.acked = true;
            ArrayDeque<Delivery> q = ps.inFlight;
            while (!q.isEmpty() && q.peekFirst().acked) {
                ps.commitCandidate = q.pollFirst().offset + 1;
            }
            if (!ps.attempts.isEmpty()) {
                ps.attempts.remove(d.offset);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sets the retry barrier at the delivery's offset and asks for a seek there after {@code delay};
     * returns false (and does nothing) if the delivery no longer counts.
     */
    boolean retry(Delivery d, Duration delay) {
        lock.lock();
        try {
            PartitionState ps = current(d);
            if (ps == null) {
                return false;
            }
            ps.attempts.merge(d.offset, 1, Integer::sum);
            // d counts, so it lies below any barrier still pending: the earliest retry wins.
            barrier(ps, d.offset);
            if (!delay.isZero()) {
                long until = System.nanoTime() + delay.toNanos();
                ps.retryPausedUntil = ps.retryPaused ? Math.max(ps.retryPausedUntil, until) : until;
                ps.retryPaused = true;
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    private static void barrier(PartitionState ps, long offset) {
        Iterator<Delivery> tail = ps.inFlight.descendingIterator();
        while (tail.hasNext()) {
            Delivery later = tail.next();
            if (later.offset < offset) {
                break;
            }
            later.superseded = true;
            tail.remove();
        }
        ps.epoch++; // what is buffered now came from before the seek
        ps.pendingSeek = offset;
        ps.expectReplay = -1;
    }

    /** Stops the partition at the delivery (nothing commits past it; it is paused). */
    boolean halt(Delivery d) {
        lock.lock();
        try {
            PartitionState ps = current(d);
            if (ps == null) {
                return false;
            }
            if (ps.haltedAt < 0 || d.offset < ps.haltedAt) {
                ps.haltedAt = d.offset;
            }
            events.emit(Kind.HALTED, d.partition, d.offset, null);
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Resumes a halted partition from its halted record; false if it is not halted here. */
    boolean resumeHalted(TopicPartition tp) {
        lock.lock();
        try {
            PartitionState ps = partitions.get(tp);
            if (ps == null || !ps.assigned || ps.haltedAt < 0) {
                return false;
            }
            long at = ps.haltedAt;
            ps.haltedAt = -1;
            barrier(ps, at);
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Halted partitions and the offset each is halted at. */
    Map<TopicPartition, Long> halted() {
        lock.lock();
        try {
            Map<TopicPartition, Long> out = new HashMap<>();
            partitions.forEach((tp, ps) -> {
                if (ps.assigned && ps.haltedAt >= 0) {
                    out.put(tp, ps.haltedAt);
                }
            });
            return out;
        } finally {
            lock.unlock();
        }
    }

    /** The acknowledgement of a handed-out delivery completed (whatever it did). */
    void completed() {
        lock.lock();
        try {
            outstanding--;
        } finally {
            lock.unlock();
        }
    }
}
