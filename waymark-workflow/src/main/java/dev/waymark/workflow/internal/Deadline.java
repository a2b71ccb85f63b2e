package dev.waymark.workflow.internal;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** A point in {@link System#nanoTime()} time by which a shutdown should be done. */
public final class Deadline {

    private final long at;

    private Deadline(long at) {
        this.at = at;
    }

    /**
     * The deadline {@code d} from now. A duration too long to count in nanoseconds (about 292 years)
     * counts as {@code Long.MAX_VALUE} of them: the sum then wraps, which differences of
     * {@code nanoTime} values tolerate.
     */
    public static Deadline after(Duration d) {
        long nanos;
        try {
            nanos = d.toNanos();
        } catch (ArithmeticException tooLong) {
            nanos = Long.MAX_VALUE;
        }
        return new Deadline(System.nanoTime() + nanos);
    }

    /** The nanoseconds left, zero once it has passed. */
    public long remainingNanos() {
        return Math.max(0, at - System.nanoTime());
    }

    /** The time left, zero once it has passed. */
    public Duration remaining() {
        return Duration.ofNanos(remainingNanos());
    }

    /**
     * Waits up to {@code nanos} for {@code t} to end; false if the waiting thread was interrupted
     * (the interrupt is consumed: the caller restores it once it has cleaned up).
     */
    public static boolean joined(Thread t, long nanos) {
        try {
            TimeUnit.NANOSECONDS.timedJoin(t, nanos);
            return true;
        } catch (InterruptedException e) {
            return false;
        }
    }
}
