package dev.waymark.kafka.internal;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/** The acknowledgement state of one partition; guarded by the {@link AckLedger}'s lock. */
final class PartitionState {

    /** Advances on every assign and revoke: handles of an older generation are fenced. */
    long generation;
    boolean assigned;
    /** Handed out and not yet resolved, in offset order; the head bounds what may be committed. */
    final ArrayDeque<Delivery> inFlight = new ArrayDeque<>();
    /** Retries requested per offset in this assignment (the envelope's attempt). */
    final Map<Long, Integer> attempts = new HashMap<>();
    /** Advances on every seek: records buffered under an older epoch are stale. */
    long epoch;
    /** The retry barrier: a seek the consumer thread has yet to apply, or -1. */
    long pendingSeek = -1;
    /** After a seek, the offset the next fetched record should have, or -1. */
    long expectReplay = -1;
    /** The next offset expected from the fetcher, or -1 before the first record. */
    long nextOffset = -1;
    /** The first offset fetched in this assignment, or -1. */
    long startOffset = -1;
    /** End of the contiguous acknowledged prefix (the offset to commit), or -1. */
    long commitCandidate = -1;
    /** Last committed offset in this assignment, or -1. */
    long committed = -1;
    /** Offset a halt stopped the partition at, or -1. */
    long haltedAt = -1;
    /** Paused for a retry delay until this {@link System#nanoTime()} value (when {@code retryPaused}). */
    long retryPausedUntil;
    boolean retryPaused;

    private String id;

    /** {@code topic-partition}, the message-id prefix (computed once). */
    String id(org.apache.kafka.common.TopicPartition tp) {
        if (id == null) {
            id = tp.topic() + "-" + tp.partition();
        }
        return id;
    }

    /** Starts a new assignment generation with empty state. */
    void newGeneration(boolean nowAssigned) {
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
    }
}
