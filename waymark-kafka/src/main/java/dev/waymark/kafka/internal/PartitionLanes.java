package dev.waymark.kafka.internal;

import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The lanes of one partition: its records held behind retry barriers, by lane key, and whether the
 * partition is paused because the hold ran out of budget. Not thread-safe: every method runs under
 * the {@link AckLedger}'s lock.
 */
final class PartitionLanes {

    private final PartitionState owner;
    private final RetryHold hold;
    private final Map<Object, Lane> lanes = new HashMap<>();
    /** The hold ran out of budget: the partition stays paused until it holds nothing any more. */
    private boolean paused;

    PartitionLanes(PartitionState owner, RetryHold hold) {
        this.owner = owner;
        this.hold = hold;
    }

    /** Whether any record is held. */
    boolean any() {
        return !lanes.isEmpty();
    }

    /** The lane held under {@code key}, or null. */
    Lane get(Object key) {
        return key == null ? null : lanes.get(key);
    }

    /** Appends a fetched record's slot to {@code lane}, or returns false if it does not fit in the budget. */
    boolean append(Lane lane, Slot slot) {
        if (!hold.fits(slot.bytes())) {
            return false;
        }
        lane.queue.addLast(slot);
        hold.add(slot);
        return true;
    }

    /**
     * Holds {@code moved} (the retried record's slot and those of its successors, any order) in the
     * lane under {@code key}, merged in offset order with what it holds, for release after the delay.
     */
    void holdBehind(Object key, List<Slot> moved, long now, long delayNanos) {
        moved.forEach(hold::add);
        Lane lane = lanes.get(key);
        if (lane == null) {
            lane = new Lane(owner, key);
            lanes.put(key, lane);
        }
        moved.sort(Comparator.comparingLong(s -> s.offset));
        if (lane.queue.isEmpty() || moved.get(moved.size() - 1).offset < lane.queue.peekFirst().offset) {
            for (int i = moved.size() - 1; i >= 0; i--) {
                lane.queue.addFirst(moved.get(i)); // the common case: all before what the lane holds
            }
        } else {
            moved.addAll(lane.queue);
            moved.sort(Comparator.comparingLong(s -> s.offset));
            lane.queue.clear();
            lane.queue.addAll(moved);
        }
        hold.schedule(lane, now, delayNanos);
    }

    /** Takes the next record of a ready lane to hand out again; a drained lane goes away. */
    Slot take(Lane lane) {
        Slot slot = lane.queue.pollFirst();
        hold.remove(slot);
        if (lane.queue.isEmpty()) {
            lanes.remove(lane.key);
            hold.drained(lane);
        }
        return slot;
    }

    /** Pauses the partition until it holds nothing (the hold ran out of budget). */
    void pauseUntilEmpty() {
        paused = true;
    }

    /** Whether the partition was paused for the budget and holds nothing now (then it no longer is). */
    boolean released() {
        if (paused && lanes.isEmpty()) {
            paused = false;
            return true;
        }
        return false;
    }

    /** Whether the partition is paused for the budget (ends the pause once nothing is held). */
    boolean pausing() {
        released();
        return paused;
    }

    /** Drops what is held at or above {@code offset} (a seek there fetches it again). */
    void dropFrom(long offset) {
        Iterator<Lane> held = lanes.values().iterator();
        while (held.hasNext()) {
            Lane lane = held.next();
            while (!lane.queue.isEmpty() && lane.queue.peekLast().offset >= offset) {
                hold.remove(lane.queue.pollLast());
            }
            if (lane.queue.isEmpty()) {
                lane.dead = true;
                held.remove();
            }
        }
    }

    /** Queues the lanes out of their delay among the ready ones again (after a halt was resumed). */
    void requeue() {
        lanes.values().forEach(hold::requeue);
    }

    /** Drops everything held (a new assignment generation). */
    void clear() {
        for (Lane lane : lanes.values()) {
            lane.queue.forEach(hold::remove);
            lane.dead = true;
        }
        lanes.clear();
        paused = false;
    }
}
