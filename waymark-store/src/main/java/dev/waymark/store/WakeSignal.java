package dev.waymark.store;

import java.time.Duration;

/**
 * A hint that new events may be readable: raised after every commit of an append made through
 * this store handle, on NOTIFY from other handles (one coalesced notification per short window),
 * and by a fallback tick so that a lost notification only delays a reader.
 *
 * <p>Readers use it as a generation counter: remember {@link #generation()}, read until caught
 * up, then {@link #awaitAfter(long, Duration)} the remembered generation. A signal between the
 * read and the wait is never missed. Correctness never depends on a signal: a woken reader always
 * reads real rows.
 */
public interface WakeSignal {

    /** The current generation; it grows by at least one on every signal. */
    long generation();

    /**
     * Waits until the generation is past {@code seenGeneration} or the timeout elapses.
     *
     * @return the generation now, equal to {@code seenGeneration} when the wait timed out
     * @throws InterruptedException if the waiting thread is interrupted
     */
    long awaitAfter(long seenGeneration, Duration timeout) throws InterruptedException;
}
