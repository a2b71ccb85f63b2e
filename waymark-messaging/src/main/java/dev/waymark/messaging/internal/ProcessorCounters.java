package dev.waymark.messaging.internal;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A processor's message counters. Serial processing has a single writer (the loop thread), so a
 * plain read and an ordered store are enough there; other modes finalize on many threads.
 */
final class ProcessorCounters {

    final AtomicLong received = new AtomicLong();
    /** Finalized with ok; {@code processed} is these plus the retries. */
    final AtomicLong succeeded = new AtomicLong();
    /** Handler exceptions and dead letters. */
    final AtomicLong failed = new AtomicLong();
    final AtomicLong retried = new AtomicLong();
    final AtomicLong deadLettered = new AtomicLong();
    private final boolean singleWriter;

    ProcessorCounters(boolean singleWriter) {
        this.singleWriter = singleWriter;
    }

    /** Adds one to {@code counter}, one of this object's. */
    void count(AtomicLong counter) {
        if (singleWriter) {
            counter.lazySet(counter.get() + 1);
        } else {
            counter.incrementAndGet();
        }
    }

    /** Messages finalized for good: ok or dead letter. */
    long finalizedForGood() {
        return succeeded.get() + deadLettered.get();
    }
}
