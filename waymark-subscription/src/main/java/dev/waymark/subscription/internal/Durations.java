package dev.waymark.subscription.internal;

import java.time.Duration;

/** Duration arithmetic that does not overflow. */
final class Durations {

    private Durations() {}

    /** The duration in nanoseconds, or {@code Long.MAX_VALUE} for one too long to count so (about 292 years). */
    static long nanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }
}
