package dev.waymark.kafka.internal;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
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
    /** Advances on every assign and revoke: handles of an older generation are fenced. */
    volatile long generation;
    volatile boolean assigned;
    /** Handed out and not yet resolved, in offset order; the head bounds what may be committed. */
    private final ArrayDeque<Delivery> inFlight = new ArrayDeque<>();
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

    PartitionState(TopicPartition partition) {
        this.partition = partition;
        this.id = partition.topic() + "-" + partition.partition();
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
        for (Delivery d : inFlight) {
            fenced += finish(d);
        }
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

    /** Records a hand-out of {@code offset}; returns its delivery. */
    Delivery handOut(long offset) {
        Delivery d = new Delivery(this, offset);
        inFlight.addLast(d);
        return d;
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
        while (!inFlight.isEmpty() && inFlight.peekFirst().acked) {
            commitCandidate = inFlight.pollFirst().offset + 1;
        }
        if (!attempts.isEmpty()) {
            attempts.remove(d.offset);
        }
    }

    /**
     * Retries a counting delivery: the barrier moves to its offset (it lies below any barrier still
     * pending, since deliveries at or above a barrier no longer count: the earliest retry wins) and
     * the partition pauses for {@code delay}.
     *
     * @return how many unfinished deliveries it superseded
     */
    int retry(Delivery d, Duration delay) {
        attempts.merge(d.offset, 1, Integer::sum);
        int superseded = barrier(d.offset);
        if (!delay.isZero()) {
            long until = System.nanoTime() + delay.toNanos();
            retryPausedUntil = retryPaused ? Math.max(retryPausedUntil, until) : until;
            retryPaused = true;
        }
        return superseded;
    }

    /**
     * Supersedes every delivery at or above {@code offset} and asks for a seek there. On a halted
     * partition a barrier below the halted record moves the halt down to it: the records from there
     * on are no longer handed out, so a resume must start at the barrier, not at the halted record.
     *
     * @return how many unfinished deliveries it superseded
     */
    private int barrier(long offset) {
        int superseded = 0;
        Iterator<Delivery> tail = inFlight.descendingIterator();
        while (tail.hasNext()) {
            Delivery later = tail.next();
            if (later.offset < offset) {
                break;
            }
            later.superseded = true;
            superseded += finish(later);
            tail.remove();
        }
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
        return barrier(at);
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

    /** Whether the partition must be paused now (halt or retry delay; ends an elapsed delay). */
    boolean pauseWanted(long now) {
        if (retryPaused && now - retryPausedUntil >= 0) {
            retryPaused = false;
        }
        return haltedAt >= 0 || retryPaused;
    }

    /** Nanoseconds until the retry delay ends, or {@code max} when there is none or it ends later. */
    long nanosUntilResume(long now, long max) {
        return assigned && retryPaused ? Math.min(max, Math.max(0, retryPausedUntil - now)) : max;
    }
}
