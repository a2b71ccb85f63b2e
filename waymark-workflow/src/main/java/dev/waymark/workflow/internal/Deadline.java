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
        return new Deadline(System.nanoTime() + nanos(d));
    }

    /** The deadline {@code d} and then {@code more} from now (counted as {@link #after} counts). */
    public static Deadline after(Duration d, Duration more) {
        long sum = nanos(d) + nanos(more);
        return new Deadline(System.nanoTime() + (sum < 0 ? Long.MAX_VALUE : sum));
    }

    private static long nanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
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
