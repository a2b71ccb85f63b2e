package dev.waymark.kafka.internal;

import dev.waymark.kafka.KafkaSourceEvent.Kind;
import java.time.Duration;
import java.util.ArrayDeque;
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
 * The source's acknowledgement state machine and its fetch buffer, shared by the consumer thread
 * (which fetches, seeks, pauses, commits and rebalances) and the processor threads (which take
 * records and acknowledge them). Every transition happens under one lock; the lock is never held
 * across broker I/O.
 *
 * <p>Rules, per partition:
 * <ul>
 *   <li>Only the contiguous acknowledged prefix of what was handed out is committable, so
 *       out-of-order acknowledgements never commit past an unfinished record.</li>
 *   <li>A retry holds the retried record in memory behind a barrier, with the records its
 *       processor orders after it (the partition's, or its key's, see {@link LaneKeys}) that were
 *       handed out after it (superseded) or are fetched since, and redelivers them in order after
 *       the delay. Their slots stay in the commit order, so nothing commits past them; other keys
 *       and partitions go on. A superseded delivery's acknowledgement does nothing.</li>
 *   <li>When holding would pass the memory budget ({@code retryHoldBytes}), the retry falls back
 *       to a seek: a barrier at the offset supersedes every delivery at or above it, drops what is
 *       buffered or held from there on, and asks the consumer thread to seek there; the partition
 *       pauses until it holds nothing.</li>
 *   <li>A revoke or assign advances the generation: older handles can no longer acknowledge,
 *       retry or halt, and buffered records of the old generation are never handed out.</li>
 *   <li>A halt stops the commit point at the halted record and pauses the partition; a retry of an
 *       earlier record after the halt moves the halt down to it, so a resume starts there.</li>
 * </ul>
 */
final class AckLedger {

    private static final Logger log = LoggerFactory.getLogger(AckLedger.class);

    /** A fetched record, stamped with the partition's generation and seek epoch at fetch time. */
    record Buffered(ConsumerRecord<byte[], byte[]> record, PartitionState state, long generation, long epoch) {}

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
    private final RetryHold hold;
    /** Set once, by the processor, before the first hand-out. */
    private volatile LaneKeys laneKeys = LaneKeys.SERIAL;
    private boolean flowPaused;
    private boolean handoutClosed;
    private int outstanding;

    AckLedger(int bufferSize, long retryHoldBytes, Events events, Runnable wakeConsumer) {
        this.hold = new RetryHold(retryHoldBytes);
        this.bufferSize = bufferSize;
        this.lowWater = bufferSize / 2;
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
        lock.lock();
        try {
            for (TopicPartition tp : assigned) {
                PartitionState ps = partitions.computeIfAbsent(tp, t -> new PartitionState(t, hold));
                if (!ps.assigned) {
                    outstanding -= ps.newGeneration(true);
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
                long uncommitted = ps.uncommitted();
                if (uncommitted >= 0) {
                    toCommit.put(tp, new OffsetAndMetadata(uncommitted));
                }
                outstanding -= ps.newGeneration(false);
            }
            buffer.removeIf(b -> gone.contains(b.state().partition()));
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
                        events.emit(Kind.RETENTION_GAP, tp, record.offset(), "expected " + expected);
                    }
                    buffer.addLast(new Buffered(record, ps, ps.generation, ps.epoch));
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
            if (buffer.size() >= bufferSize) {
                flowPaused = true;
            } else if (buffer.size() <= lowWater) {
                flowPaused = false;
            }
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

    // ---- processor threads -----------------------------------------------------------------

    /**
     * The next current record, waiting up to {@code timeout}; null if none. Records held behind a
     * retry barrier whose delay ended come first; a fetched record whose lane is held joins it.
     */
    Handout next(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        lock.lockInterruptibly();
        try {
            while (!handoutClosed) {
                if (hold.active()) {
                    Handout held = nextHeld();
                    if (held != null) {
                        return held;
                    }
                }
                Buffered b = buffer.pollFirst();
                if (b == null) {
                    long now = System.nanoTime();
                    long left = deadline - now;
                    if (left <= 0) {
                        return null;
                    }
                    available.awaitNanos(hold.active() ? hold.nanosUntilReady(now, left) : left);
                    continue;
                }
                if (flowPaused && buffer.size() <= lowWater) {
                    flowPaused = false;
                    wakeConsumer.run(); // resume fetching now rather than after the current poll
                }
                PartitionState ps = b.state(); // the same object for every generation of the partition
                if (!ps.current(b.generation(), b.epoch())) {
                    continue; // revoked, superseded by a seek, or halted since it was fetched
                }
                if (ps.holding() && joinedLane(ps, b.record())) {
                    continue;
                }
                Delivery d = ps.handOut(b.record());
                outstanding++;
                return new Handout(b.record(), d, ps.attempt(d.offset), ps.id());
            }
            return null;
        } finally {
            lock.unlock();
        }
    }

    /** The next record of a lane whose retry delay ended, or null. */
    private Handout nextHeld() {
        Lane lane = hold.nextReady(System.nanoTime());
        if (lane == null) {
            return null;
        }
        PartitionState ps = lane.owner;
        Slot slot = ps.takeHeld(lane);
        if (ps.holdReleased()) {
            wakeConsumer.run(); // resume fetching the partition now rather than after the current poll
        }
        Delivery d = ps.handOut(slot);
        outstanding++;
        return new Handout(slot.record, d, ps.attempt(d.offset), ps.id());
    }

    /**
     * Holds a fetched record behind its lane's retry barrier if its lane is held; past the budget,
     * falls back to seeking back to it. Returns false if it may be handed out.
     */
    private boolean joinedLane(PartitionState ps, ConsumerRecord<byte[], byte[]> record) {
        Lane lane = ps.lane(laneKeys.of(record));
        if (lane == null) {
            return false;
        }
        if (!ps.holdFetched(lane, record)) {
            ps.fallBackToSeek(record.offset());
            events.emit(Kind.SEEK_FALLBACK, ps.partition(), record.offset(), "retryHoldBytes reached");
            wakeConsumer.run();
        }
        return true;
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
        return ps != null && ps.counts(d) ? ps : null;
    }

    /** Marks the delivery acknowledged; returns false (and does nothing) if it no longer counts. */
    boolean ack(Delivery d) {
        lock.lock();
        try {
            return acknowledge(d);
        } finally {
            lock.unlock();
        }
    }

    private boolean acknowledge(Delivery d) {
        PartitionState ps = current(d);
        if (ps == null) {
            return false;
        }
        ps.acknowledge(d);
        return true;
    }

    /**
     * Retries the delivery: holds it (and what its processor orders after it) in memory for
     * redelivery after {@code delay}, or, past the memory budget, sets the retry barrier at its
     * offset and asks for a seek there after {@code delay}.
     *
     * @return true if the consumer thread must act (a seek, a pause); false if the retry is held
     *     in memory or the delivery no longer counts (then nothing changed)
     */
    boolean retry(Delivery d, Duration delay) {
        lock.lock();
        try {
            PartitionState ps = current(d);
            if (ps == null) {
                return false;
            }
            LaneKeys keys = laneKeys;
            int superseded = ps.hold(d, keys.of(d.slot.record), keys, delay, System.nanoTime());
            if (superseded >= 0) {
                outstanding -= superseded;
                events.emit(Kind.RETRY_HELD, d.partition, d.offset, null);
                available.signalAll(); // a waiting hand-out recomputes its wait (or takes it at once)
                return false;
            }
            outstanding -= ps.retryBySeek(d, delay);
            events.emit(Kind.SEEK_FALLBACK, d.partition, d.offset, "retryHoldBytes reached");
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Stops the partition at the delivery (nothing commits past it; it is paused). */
    boolean halt(Delivery d) {
        lock.lock();
        try {
            PartitionState ps = current(d);
            if (ps == null) {
                return false;
            }
            ps.halt(d);
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
            int superseded = ps == null ? -1 : ps.resumeHalted();
            if (superseded < 0) {
                return false;
            }
            outstanding -= superseded;
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

    /** {@link #ack} and {@link #completed} under one acquisition of the lock. */
    boolean ackCompleted(Delivery d) {
        lock.lock();
        try {
            outstanding -= PartitionState.finish(d);
            return acknowledge(d);
        } finally {
            lock.unlock();
        }
    }

    /** The acknowledgement of a handed-out delivery completed (whatever it did). */
    void completed(Delivery d) {
        lock.lock();
        try {
            outstanding -= PartitionState.finish(d);
        } finally {
            lock.unlock();
        }
    }
}
