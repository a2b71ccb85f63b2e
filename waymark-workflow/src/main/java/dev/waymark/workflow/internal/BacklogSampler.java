package dev.waymark.workflow.internal;

import dev.waymark.workflow.backpressure.Backpressure;
import dev.waymark.workflow.backpressure.WorkflowBacklog;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * Samples the runnable backlog (one statement, {@code wf_backlog}) at most once per interval, shared by
 * an engine, its resume workers and their metrics; and admits starts against a bound without a
 * statement per start: the last sample plus the starts admitted since.
 */
public final class BacklogSampler {

    private final Queries queries;
    private final long maxAgeNanos;
    private final LongSupplier inFlightHere;
    private final ReentrantLock refreshing = new ReentrantLock();
    /** Starts admitted since the last sample began (a start committed during the query counts twice: safe). */
    private final AtomicLong admittedSince = new AtomicLong();
    private volatile WorkflowBacklog last;
    private volatile long lastAt;

    /** Samples through {@code queries}, reused for up to {@code maxAge}. */
    public BacklogSampler(Queries queries, Duration maxAge, LongSupplier inFlightHere) {
        this.queries = queries;
        this.maxAgeNanos = maxAge.toNanos();
        this.inFlightHere = inFlightHere;
    }

    /**
     * The backlog, sampled at most the interval ago; one caller refreshes while others get the last
     * sample. The first call always reads.
     *
     * @throws dev.waymark.store.StoreException if sampling fails and there is no earlier sample
     */
    public WorkflowBacklog current() {
        WorkflowBacklog b = last;
        if (b != null && System.nanoTime() - lastAt < maxAgeNanos) {
            return b;
        }
        if (b != null && !refreshing.tryLock()) {
            return b;
        }
        if (b == null) {
            refreshing.lock();
        }
        try {
            if (last != null && System.nanoTime() - lastAt < maxAgeNanos) {
                return last;
            }
            return refresh();
        } finally {
            refreshing.unlock();
        }
    }

    /** The last sample, without reading (null before the first). */
    public WorkflowBacklog last() {
        return last;
    }

    /** Samples now. */
    public WorkflowBacklog refresh() {
        admittedSince.set(0);
        WorkflowBacklog b = queries.backlog(inFlightHere.getAsLong());
        last = b;
        lastAt = System.nanoTime();
        return b;
    }

    /**
     * Admits one start if the backlog (last sample plus the starts admitted since) is within
     * {@code bound}; true if admitted.
     */
    public boolean tryAdmit(Backpressure.MaxBacklog bound) {
        WorkflowBacklog b = current();
        while (true) {
            long since = admittedSince.get();
            if (b.total() + since >= bound.maxBacklog()) {
                return false;
            }
            if (admittedSince.compareAndSet(since, since + 1)) {
                return true;
            }
        }
    }
}
