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
 * The source's acknowledgement state machine and its fetch buffer, shared by the consumer thread
 * (which fetches, seeks, pauses, commits and rebalances) and the processor threads (which take
 * records and acknowledge them). Every transition happens under one lock; the lock is never held
 * across broker I/O, nor while the source's listeners are called: the events a transition decides
 * are collected under the lock ({@link PendingEvents}) and emitted after it is released.
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
final class AckLedger extends LedgerCore {

    /** A record handed out, with its delivery, attempt and message-id prefix ({@code topic-partition}). */
    record Handout(ConsumerRecord<byte[], byte[]> record, Delivery delivery, int attempt, String partitionId) {}

    AckLedger(int bufferSize, long retryHoldBytes, Events events, Runnable wakeConsumer) {
        super(bufferSize, retryHoldBytes, events, wakeConsumer);
    }

    // ---- processor threads -----------------------------------------------------------------

    /**
     * The next current record, waiting up to {@code timeout}; null if none. Records held behind a
     * retry barrier whose delay ended come first; a fetched record whose lane is held joins it.
     */
    Handout next(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        PendingEvents out = new PendingEvents();
        lock.lockInterruptibly();
        try {
            while (!handoutClosed) {
                if (hold.active()) {
                    Handout held = nextHeld();
                    if (held != null) {
                        return held;
                    }
                }
                FetchBuffer.Buffered b = buffer.poll();
                if (b == null) {
                    long now = System.nanoTime();
                    long left = deadline - now;
                    if (left <= 0) {
                        return null;
                    }
                    available.awaitNanos(hold.active() ? hold.nanosUntilReady(now, left) : left);
                    continue;
                }
                if (buffer.resumedByTake()) {
                    wakeConsumer.run(); // resume fetching now rather than after the current poll
                }
                PartitionState ps = b.state(); // the same object for every generation of the partition
                if (!ps.current(b.generation(), b.epoch())) {
                    continue; // revoked, superseded by a seek, or halted since it was fetched
                }
                if (ps.holding() && joinedLane(ps, b.record(), out)) {
                    continue;
                }
                Delivery d = ps.handOut(b.record());
                outstanding++;
                return new Handout(b.record(), d, ps.attempt(d.offset), ps.id());
            }
            return null;
        } finally {
            lock.unlock();
            out.emitTo(events);
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
    private boolean joinedLane(PartitionState ps, ConsumerRecord<byte[], byte[]> record, PendingEvents out) {
        Lane lane = ps.lane(laneKeys.of(record));
        if (lane == null) {
            return false;
        }
        if (!ps.holdFetched(lane, record)) {
            ps.fallBackToSeek(record.offset());
            out.add(Kind.SEEK_FALLBACK, ps.partition(), record.offset(), "retryHoldBytes reached");
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
        PendingEvents out = new PendingEvents();
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
                out.add(Kind.RETRY_HELD, d.partition, d.offset, null);
                available.signalAll(); // a waiting hand-out recomputes its wait (or takes it at once)
                return false;
            }
            outstanding -= ps.retryBySeek(d, delay);
            out.add(Kind.SEEK_FALLBACK, d.partition, d.offset, "retryHoldBytes reached");
            return true;
        } finally {
            lock.unlock();
            out.emitTo(events);
        }
    }

    /** Stops the partition at the delivery (nothing commits past it; it is paused). */
    boolean halt(Delivery d) {
        PendingEvents out = new PendingEvents();
        lock.lock();
        try {
            PartitionState ps = current(d);
            if (ps == null) {
                return false;
            }
            ps.halt(d);
            out.add(Kind.HALTED, d.partition, d.offset, null);
            return true;
        } finally {
            lock.unlock();
            out.emitTo(events);
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
