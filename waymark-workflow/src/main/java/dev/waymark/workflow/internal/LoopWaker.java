package dev.waymark.workflow.internal;

import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * When a resume worker's loop passes next: it waits for a poke (a wake of the store, a slot freed
 * while the loop waits for one, close), the earliest wake time it knows of (its last claim's, or one
 * a local run told it of), or the poll interval, whichever comes first.
 */
public final class LoopWaker {

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition wakeup = lock.newCondition();
    /** Guarded by {@link #lock}: pokes so far. */
    private long pokes;
    /**
     * Guarded by {@link #lock}: the earliest wake time local runs told of since the loop last passed
     * it (JVM epoch millis); kept apart from a pass's own plan, so that a hint heard during a pass is
     * not lost when the loop plans its wait.
     */
    private long hintedWakeMillis = Long.MAX_VALUE;
    /** Whether the loop waits for an attempt to end (its last pass filled the free slots). */
    private volatile boolean waitingForSlot;
    /** Database clock minus this JVM's, as of the last claim. */
    private volatile long clockOffsetMillis;

    /** The pokes so far: remember before a pass, then {@link #awaitNext} it. */
    public long pokes() {
        lock.lock();
        try {
            return pokes;
        } finally {
            lock.unlock();
        }
    }

    /** Ends the loop's wait now. */
    public void poke() {
        lock.lock();
        try {
            pokes++;
            wakeup.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** An attempt ended: pokes the loop if it waits for a free slot. */
    public void slotFreed() {
        if (waitingForSlot) {
            poke();
        }
    }

    /** The database time as of a claim, to turn database wake times into this JVM's clock. */
    public void databaseNow(Instant dbNow) {
        clockOffsetMillis = dbNow.toEpochMilli() - System.currentTimeMillis();
    }

    /** The JVM time of a database instant, by the last known offset. */
    public long localMillis(Instant dbInstant) {
        return dbInstant.toEpochMilli() - clockOffsetMillis;
    }

    /** A run in this process parked until {@code wakeAfter} (database time): pass then if sooner than planned. */
    public void dueHint(Instant wakeAfter) {
        long at = localMillis(wakeAfter);
        lock.lock();
        try {
            if (at < hintedWakeMillis) {
                hintedWakeMillis = at;
                wakeup.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until a poke after {@code seen}, a free slot (when {@code slotsFull}: {@code slotFree}
     * says), {@code nextDueMillis}, a hinted wake time, or {@code pollMillis}; returns at once when
     * {@code running} turns false and {@link #poke} was called.
     */
    public void awaitNext(long seen, boolean slotsFull, BooleanSupplier slotFree, long nextDueMillis, long pollMillis,
            BooleanSupplier running) throws InterruptedException {
        lock.lock();
        try {
            waitingForSlot = slotsFull;
            long planned = Math.min(nextDueMillis, System.currentTimeMillis() + pollMillis);
            while (running.getAsBoolean() && pokes == seen) {
                if (waitingForSlot && slotFree.getAsBoolean()) {
                    break; // a slot freed before we began to wait
                }
                long left = Math.min(planned, hintedWakeMillis) - System.currentTimeMillis();
                if (left <= 0) {
                    break;
                }
                wakeup.await(left, TimeUnit.MILLISECONDS);
            }
            if (hintedWakeMillis <= System.currentTimeMillis()) {
                hintedWakeMillis = Long.MAX_VALUE; // the pass about to run claims what came due
            }
            waitingForSlot = false;
        } finally {
            lock.unlock();
        }
    }

    /** Waits until {@code gapNanos} after {@code startedNanos} ({@link #poke} with running false ends it). */
    public void awaitGap(long startedNanos, long gapNanos, BooleanSupplier running) throws InterruptedException {
        lock.lock();
        try {
            long left;
            while (running.getAsBoolean() && (left = startedNanos + gapNanos - System.nanoTime()) > 0) {
                wakeup.awaitNanos(left);
            }
        } finally {
            lock.unlock();
        }
    }
}
