package dev.waymark.kafka.internal;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * The acknowledgement state of one partition and its transitions. Not thread-safe: every method
 * runs under the {@link AckLedger}'s lock.
 */
final class PartitionState {

    /** What to do with a fetched record. */
    enum Admission {
        /** Buffer it. */
        ACCEPT,
        /** Buffer it; the retried record before it no longer exists (retention, compaction). */
        ACCEPT_AFTER_GAP,
        /** Drop it: stale, or the partition is halted, revoked or about to seek. */
        DROP
    }

    private final TopicPartition partition;
    private final String id;
    private final RetryHold hold;
    /** Advances on every assign and revoke: handles of an older generation are fenced. */
    volatile long generation;
    volatile boolean assigned;
    /**
     * Handed out (or held behind a retry barrier) and not yet passed by the commit point, in offset
     * order; the first unacknowledged one bounds what may be committed.
     */
    private final ArrayDeque<Slot> inFlight = new ArrayDeque<>();
    /** Records held behind retry barriers. */
    private final PartitionLanes lanes;
    /** Retries requested per offset in this assignment (the envelope's attempt). */
    private final Map<Long, Integer> attempts = new HashMap<>();
    /** Advances on every seek: records buffered under an older epoch are stale. */
    long epoch;
    /** The retry barrier: a seek the consumer thread has yet to apply, or -1. */
    long pendingSeek = -1;
    /** After a seek, the offset the next fetched record should have, or -1. */
    long expectReplay = -1;
    /** The next offset expected from the fetcher, or -1 before the first record. */
    private long nextOffset = -1;
    /** The first offset fetched in this assignment, or -1. */
    long startOffset = -1;
    /** End of the contiguous acknowledged prefix (the offset to commit), or -1. */
    private long commitCandidate = -1;
    /** Last committed offset in this assignment, or -1. */
    long committed = -1;
    /**
     * Offset a halt stopped the partition at (lowered to a record before it that is retried after
     * the halt), or -1.
     */
    long haltedAt = -1;
    /** Paused for a retry delay until this {@link System#nanoTime()} value (when {@code retryPaused}). */
    private long retryPausedUntil;
    private boolean retryPaused;

    PartitionState(TopicPartition partition, RetryHold hold) {
        this.partition = partition;
        this.id = partition.topic() + "-" + partition.partition();
        this.hold = hold;
        this.lanes = new PartitionLanes(this, hold);
    }

    TopicPartition partition() {
        return partition;
    }

    /** {@code topic-partition}, the message-id prefix. */
    String id() {
        return id;
    }

    /**
     * Starts a new assignment generation with empty state.
     *
     * @return how many unfinished deliveries it fenced (see {@link #finish(Delivery)})
     */
    int newGeneration(boolean nowAssigned) {
        int fenced = 0;
        for (Slot s : inFlight) {
            if (s.delivery != null) {
                fenced += finish(s.delivery);
            }
        }
        lanes.clear();
        generation++;
        assigned = nowAssigned;
        inFlight.clear();
        attempts.clear();
        epoch++;
        pendingSeek = -1;
        expectReplay = -1;
        nextOffset = -1;
        startOffset = -1;
        commitCandidate = -1;
        committed = -1;
        haltedAt = -1;
        retryPaused = false;
        return fenced;
    }

    /**
     * Marks a delivery finished: its acknowledgement completed, or it no longer counts.
     *
     * @return 1 if it was not finished before, else 0
     */
    static int finish(Delivery d) {
        if (d.finished) {
            return 0;
        }
        d.finished = true;
        return 1;
    }

    /** Whether records of this partition may be fetched into the buffer at all now. */
    boolean fetchable() {
        return assigned && haltedAt < 0 && pendingSeek < 0;
    }

    /** Decides about a fetched record (call only when {@link #fetchable()}). */
    Admission admit(long offset) {
        Admission admission = Admission.ACCEPT;
        if (expectReplay >= 0) {
            if (offset > expectReplay) {
                admission = Admission.ACCEPT_AFTER_GAP;
            }
            expectReplay = -1;
        } else if (offset < nextOffset) {
            return Admission.DROP; // never hand out below what this assignment already fetched
        }
        if (startOffset < 0) {
            startOffset = offset;
        }
        nextOffset = offset + 1;
        return admission;
    }

    /** Whether a record buffered under {@code bufferedGeneration} and {@code bufferedEpoch} may be handed out. */
    boolean current(long bufferedGeneration, long bufferedEpoch) {
        return assigned && generation == bufferedGeneration && epoch == bufferedEpoch && haltedAt < 0;
    }

    /** Records a hand-out of a fetched record; returns its delivery. */
    Delivery handOut(ConsumerRecord<byte[], byte[]> record) {
        Slot slot = new Slot(record);
        inFlight.addLast(slot);
        return handOut(slot);
    }

    /** Hands a held record out again; returns its delivery. */
    Delivery handOut(Slot slot) {
        Delivery d = new Delivery(this, slot);
        slot.delivery = d;
        return d;
    }

    /** Whether records of the partition may be handed out now (assigned, not halted). */
    boolean handingOut() {
        return assigned && haltedAt < 0;
    }

    /** Whether any record of the partition is held behind a retry barrier. */
    boolean holding() {
        return lanes.any();
    }

    /** The lane held under {@code key}, or null. */
    Lane lane(Object key) {
        return lanes.get(key);
    }

    /**
     * Holds a fetched record, never handed out, at the end of {@code lane} (its key waits behind a
     * retry barrier), or returns false if it does not fit in the budget.
     */
    boolean holdFetched(Lane lane, ConsumerRecord<byte[], byte[]> record) {
        Slot slot = new Slot(record);
        if (!lanes.append(lane, slot)) {
            return false;
        }
        inFlight.addLast(slot);
        return true;
    }

    /** Takes the next record of a ready lane to hand out again; a drained lane goes away. */
    Slot takeHeld(Lane lane) {
        return lanes.take(lane);
    }

    /** Whether the partition was paused for the budget and holds nothing now (then it is no longer). */
    boolean holdReleased() {
        return lanes.released();
    }

    /**
     * Retries a counting delivery in memory: it and the records its processor orders after it that
     * were handed out and are not finished (same lane) are held, in offset order, for redelivery
     * after {@code delay}; their slots stay, so nothing commits past them. Records of that lane
     * fetched later join the lane behind them.
     *
     * @param laneKey the lane the retried record's successors join, or null for a lane of its own
     * @return how many unfinished deliveries it superseded, or -1 (nothing changed) if they do not
     *     fit in the budget
     */
    int hold(Delivery d, Object laneKey, LaneKeys keys, Duration delay, long now) {
        Slot retried = d.slot;
        List<Slot> moved = new ArrayList<>();
        long bytes = retried.bytes();
        if (laneKey != null) {
            Iterator<Slot> tail = inFlight.descendingIterator();
            while (tail.hasNext()) {
                Slot later = tail.next();
                if (later.offset <= retried.offset) {
                    break;
                }
                if (!later.acked && later.delivery != null && !later.delivery.superseded
                        && keys.sameLane(retried.record, later.record)) {
                    moved.add(later);
                    bytes += later.bytes();
                }
            }
        }
        if (!hold.fits(bytes)) {
            return -1;
        }
        moved.add(retried);
        attempts.merge(d.offset, 1, Integer::sum);
        if (haltedAt > d.offset) {
            haltedAt = d.offset;
        }
        int superseded = 0;
        for (Slot s : moved) {
            s.delivery.superseded = true;
            superseded += finish(s.delivery);
            s.delivery = null;
        }
        lanes.holdBehind(laneKey != null ? laneKey : retried, moved, now, delay.toNanos());
        return superseded;
    }

    /**
     * The hold ran out of budget at a fetched record not handed out yet: it and everything after it
     * is fetched again by a seek, and the partition pauses until nothing is held for it.
     */
    void fallBackToSeek(long offset) {
        barrier(offset);
        lanes.pauseUntilEmpty();
    }

    /** The attempt of the record at {@code offset}: retries requested for it in this assignment. */
    int attempt(long offset) {
        return attempts.isEmpty() ? 0 : attempts.getOrDefault(offset, 0);
    }

    /** Whether the delivery still counts (same generation, not superseded); safe without the lock. */
    boolean counts(Delivery d) {
        return assigned && generation == d.generation && !d.superseded;
    }

    /** Acknowledges a counting delivery and advances the commit point over the acknowledged prefix. */
    void acknowledge(Delivery d) {
        d.acked = true;
        d.slot.acked = true;
        while (!inFlight.isEmpty() && inFlight.peekFirst().acked) {
            commitCandidate = inFlight.pollFirst().offset + 1;
        }
        if (!attempts.isEmpty()) {
            attempts.remove(d.offset);
        }
    }

    /**
     * Retries a counting delivery by seeking back, when holding it does not fit in the budget: the
     * barrier moves to its offset (it lies below any barrier still pending, since deliveries at or
     * above a barrier no longer count: the earliest retry wins) and the partition pauses for
     * {@code delay}, and until nothing is held for it any more.
     *
     * @return how many unfinished deliveries it superseded
     */
    int retryBySeek(Delivery d, Duration delay) {
        attempts.merge(d.offset, 1, Integer::sum);
        int superseded = barrier(d.offset);
        lanes.pauseUntilEmpty();
        if (!delay.isZero()) {
            long until = System.nanoTime() + delay.toNanos();
            retryPausedUntil = retryPaused ? Math.max(retryPausedUntil, until) : until;
            retryPaused = true;
        }
        return superseded;
    }

    /**
     * Supersedes every delivery at or above {@code offset}, drops what is held from there on, and
     * asks for a seek there. On a halted
     * partition a barrier below the halted record moves the halt down to it: the records from there
     * on are no longer handed out, so a resume must start at the barrier, not at the halted record.
     *
     * @return how many unfinished deliveries it superseded
     */
    private int barrier(long offset) {
        int superseded = 0;
        Iterator<Slot> tail = inFlight.descendingIterator();
        while (tail.hasNext()) {
            Slot later = tail.next();
            if (later.offset < offset) {
                break;
            }
            if (later.delivery != null) {
                later.delivery.superseded = true;
                superseded += finish(later.delivery);
            }
            tail.remove();
        }
        lanes.dropFrom(offset);
        if (haltedAt > offset) {
            haltedAt = offset;
        }
        epoch++; // what is buffered now came from before the seek
        pendingSeek = offset;
        expectReplay = -1;
        return superseded;
    }

    /** Stops the partition at a counting delivery: nothing commits past it; it is paused. */
    void halt(Delivery d) {
        if (haltedAt < 0 || d.offset < haltedAt) {
            haltedAt = d.offset;
        }
    }

    /**
     * Resumes a halted partition from the halted record (or the earliest record retried after the
     * halt, see {@link #barrier(long)}).
     *
     * @return how many unfinished deliveries it superseded, or -1 if it is not halted
     */
    int resumeHalted() {
        if (!assigned || haltedAt < 0) {
            return -1;
        }
        long at = haltedAt;
        haltedAt = -1;
        int superseded = barrier(at);
        lanes.requeue(); // held records before the halted one go out again
        return superseded;
    }

    /** The pending seek target after applying it, or -1 if there is none. */
    long takeSeek() {
        if (!assigned || pendingSeek < 0) {
            return -1;
        }
        long target = pendingSeek;
        expectReplay = target;
        nextOffset = target;
        pendingSeek = -1;
        return target;
    }

    /** The offset to commit if the acknowledged prefix moved past the last commit, else -1. */
    long uncommitted() {
        return assigned && commitCandidate > committed ? commitCandidate : -1;
    }

    /**
     * Whether the partition must be paused now (halt, a seek-back retry's delay, or the hold out of
     * budget while it holds records; ends an elapsed delay).
     */
    boolean pauseWanted(long now) {
        if (retryPaused && now - retryPausedUntil >= 0) {
            retryPaused = false;
        }
        return haltedAt >= 0 || retryPaused || lanes.pausing();
    }

    /** Nanoseconds until the retry delay ends, or {@code max} when there is none or it ends later. */
    long nanosUntilResume(long now, long max) {
        return assigned && retryPaused ? Math.min(max, Math.max(0, retryPausedUntil - now)) : max;
    }
}
