package dev.waymark.workflow.internal;

import java.time.Duration;

/** Durations as deadline arithmetic needs them. */
public final class Durations {

    private Durations() {}

    /**
     * The duration in nanoseconds, or {@code Long.MAX_VALUE} for one too long to count so (about
     * 292 years): a deadline {@code System.nanoTime() + n} then wraps, which differences of
     * {@code nanoTime} values tolerate.
     */
    public static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }
}
