package dev.waymark.messaging.internal;

import java.time.Duration;

/**
 * Whether a processor is stuck: it has work pending but finalized nothing for good (ok, dead
 * letter) for a while. Progress is sampled by the checks, not stamped per message (a clock read per
 * message would cost more than a no-op handler): the time without progress counts from the first
 * check that saw work pending at the current progress.
 *
 * <p>A retry is not progress: the message comes again, and a message that always fails is retried
 * for ever. Between its retries nothing may be in flight (the source waits out the retry delay, or
 * seeks back and fetches again), so a retry seen since the last progress counts as work pending, for
 * up to the stuck window after the last check that saw a new retry (a retried message that never
 * comes back, say because its partition moved to another consumer, stops counting then).
 */
final class StuckCheck {

    /** Progress seen by the last check; -1 before the first. */
    private long progress = -1;
    /** Retries seen by the last check, and by the check that last saw progress change. */
    private long retries;
    private long retriesAtProgress;
    /** When a check last saw the retries change. */
    private long retrySeenAt;
    /** Whether work has been pending since {@code pendingSince} at the current progress. */
    private boolean pending;
    private long pendingSince;

    /**
     * @param finalized messages finalized for good so far (monotonic)
     * @param retried messages finalized with a retry so far (monotonic)
     * @param working whether messages are in flight or waiting in the inbox now
     * @param running whether the processor is running (a draining or ended one is never stuck)
     */
    synchronized boolean isStuck(long finalized, long retried, boolean working, boolean running, Duration after) {
        long now = System.nanoTime();
        long window = after.toNanos();
        if (finalized != progress) {
            progress = finalized;
            retriesAtProgress = retried; // retries up to here may have come before the progress: not counted
            pending = false;
        }
        if (retried != retries) {
            retries = retried;
            retrySeenAt = now;
        }
        boolean retrying = retried != retriesAtProgress && now - retrySeenAt <= window;
        if (!working && !retrying) {
            pending = false;
            return false;
        }
        if (!pending) {
            pending = true;
            pendingSince = now;
            return false;
        }
        return running && now - pendingSince > window;
    }
}
