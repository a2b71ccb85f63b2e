package dev.waymark.kafka.internal;

import java.util.ArrayDeque;
import java.util.PriorityQueue;

/**
 * The source's records held behind retry barriers: their memory budget, and the lanes in their
 * retry delay or ready to be redelivered. Not thread-safe: every method runs under the
 * {@link AckLedger}'s lock.
 */
final class RetryHold {

    /** Counted per held record on top of its key and value bytes (the record and its slot). */
    static final long RECORD_OVERHEAD_BYTES = 128;

    /** A lane's place in the waiting queue; stale once the lane was rescheduled or died. */
    private record Waiting(Lane lane, long readyAt, int version) {}

    private final long budget;
    private final PriorityQueue<Waiting> waiting = new PriorityQueue<>(
            (a, b) -> Long.compare(a.readyAt - b.readyAt, 0));
    private final ArrayDeque<Lane> ready = new ArrayDeque<>();
    private long bytes;
    private int records;

    RetryHold(long budget) {
        this.budget = budget;
    }

    /** Whether {@code more} bytes can be held within the budget. */
    boolean fits(long more) {
        return bytes + more <= budget;
    }

    void add(Slot slot) {
        bytes += slot.bytes();
        records++;
    }

    void remove(Slot slot) {
        bytes -= slot.bytes();
        records--;
    }

    /** Records held now. */
    int records() {
        return records;
    }

    /** Whether any lane waits or is ready: only then does a hand-out look at the lanes. */
    boolean active() {
        return !ready.isEmpty() || !waiting.isEmpty();
    }

    /** Starts (or restarts) the lane's retry delay, from {@code now}. */
    void schedule(Lane lane, long now, long delayNanos) {
        lane.version++;
        if (delayNanos <= 0) {
            lane.waiting = false;
            makeReady(lane);
            return;
        }
        lane.waiting = true;
        lane.readyAt = now + delayNanos;
        waiting.add(new Waiting(lane, lane.readyAt, lane.version));
    }

    /** Queues a lane out of its delay among the ready ones again (after a halt was resumed). */
    void requeue(Lane lane) {
        if (!lane.waiting && !lane.dead) {
            makeReady(lane);
        }
    }

    private void makeReady(Lane lane) {
        if (!lane.inReady) {
            lane.inReady = true;
            ready.addLast(lane);
        }
    }

    /**
     * The first lane whose records may be handed out now, or null. Lanes whose delay ended join
     * the ready ones first; dead, re-held and halted lanes leave them (a resume requeues a halted one).
     */
    Lane nextReady(long now) {
        while (!waiting.isEmpty() && waiting.peek().readyAt() - now <= 0) {
            Waiting w = waiting.poll();
            Lane lane = w.lane();
            if (lane.version == w.version() && !lane.dead) {
                lane.waiting = false;
                makeReady(lane);
            }
        }
        while (!ready.isEmpty()) {
            Lane lane = ready.peekFirst();
            if (!lane.dead && !lane.waiting && lane.owner.handingOut()) {
                return lane;
            }
            ready.pollFirst();
            lane.inReady = false;
        }
        return null;
    }

    /** Takes the lane off the ready queue (it was drained: it is at the head). */
    void drained(Lane lane) {
        lane.dead = true;
        if (ready.peekFirst() == lane) {
            ready.pollFirst();
        }
        lane.inReady = false;
    }

    /** Nanoseconds until the earliest retry delay ends (0 if a lane is ready), at most {@code max}. */
    long nanosUntilReady(long now, long max) {
        if (!ready.isEmpty()) {
            return 0;
        }
        Waiting w = waiting.peek();
        return w == null ? max : Math.min(max, Math.max(0, w.readyAt() - now));
    }
}
