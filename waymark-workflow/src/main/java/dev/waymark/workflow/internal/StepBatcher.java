package dev.waymark.workflow.internal;

import dev.waymark.workflow.exception.WorkflowException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Group commit for journal entries (starts, steps and completions): runs that journal an entry at
 * the same moment share one transaction ({@code wf_journal}). A run hands its entry over and waits for
 * its own outcome, so a step still returns only after its entry is committed; nothing is
 * acknowledged early. While a flusher commits, the next entries gather in the queue, so batches
 * grow with the number of runs in flight and a lone run pays only a thread hand-off. A flusher
 * never waits for a lock (the batch only try-locks): whatever a batch cannot settle (a lock was
 * busy, or the batch failed as a whole) goes back to the run, which journals it on its own.
 */
final class StepBatcher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(StepBatcher.class);

    /** How long {@link #close()} waits for the flushers' statements to end. */
    static final Duration CLOSE_WAIT = Duration.ofSeconds(30);

    private record Pending(JournalWrite entry, CompletableFuture<BatchJournal.Outcome> outcome) {}

    private final Instances instances;
    private final int maxBatch;
    private final LinkedBlockingQueue<Pending> queue = new LinkedBlockingQueue<>();
    private final List<Thread> flushers = new ArrayList<>();
    private volatile boolean closed;

    /** Starts {@code flushers} threads, each committing up to {@code maxBatch} entries at a time. */
    StepBatcher(Instances instances, int flushers, int maxBatch, String name) {
        if (flushers < 1 || maxBatch < 1) {
            throw new IllegalArgumentException("flushers and maxBatch must be positive");
        }
        this.instances = instances;
        this.maxBatch = maxBatch;
        for (int i = 0; i < flushers; i++) {
            this.flushers.add(Thread.ofPlatform().daemon().name(name + "-journal-" + i).start(this::flushLoop));
        }
    }

    /**
     * Journals {@code entry} in a shared transaction and returns its outcome, or null when the caller
     * must journal it on its own (the batcher is closed, the instance was busy, or the batch failed).
     */
    BatchJournal.Outcome journal(JournalWrite entry) {
        if (closed) {
            return null;
        }
        Pending p = new Pending(entry, new CompletableFuture<>());
        queue.add(p);
        if (closed && queue.remove(p)) {
            return null; // raced with close: no flusher may be left to take it
        }
        try {
            return p.outcome().get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the entry may still commit: replay then finds it
            throw new WorkflowException(
                    "interrupted while journaling " + entry.type() + " of workflow " + entry.name() + "/"
                            + entry.id(),
                    e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new WorkflowException(e.getMessage(), e);
        }
    }

    /** How many entries wait for a flusher (for tests). */
    int queued() {
        return queue.size();
    }

    private void flushLoop() {
        List<Pending> batch = new ArrayList<>(maxBatch);
        while (!closed || !queue.isEmpty()) {
            Pending first;
            try {
                first = queue.poll(100, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                continue; // close interrupts to end the wait; the loop condition decides
            }
            if (first == null) {
                continue;
            }
            batch.clear();
            batch.add(first);
            queue.drainTo(batch, maxBatch - 1);
            flush(batch);
        }
    }

    private void flush(List<Pending> batch) {
        List<BatchJournal.Outcome> outcomes;
        try {
            outcomes = instances.journal(batch.stream().map(Pending::entry).toList());
        } catch (RuntimeException | Error e) {
            // An Error too: a flusher that died here would leave the batch's runs waiting forever.
            log.debug("waymark workflow: a batch of {} journal entries failed; each is journaled on its own: {}",
                    batch.size(), e.toString());
            batch.forEach(p -> p.outcome().complete(null));
            return;
        }
        for (int i = 0; i < batch.size(); i++) {
            BatchJournal.Outcome o = outcomes.get(i);
            batch.get(i).outcome().complete(o.busy() ? null : o);
        }
    }

    /**
     * Stops taking entries; what is queued is still committed (or handed back) before this returns,
     * waiting for the flushers at most {@link #CLOSE_WAIT}.
     */
    @Override
    public void close() {
        close(CLOSE_WAIT);
    }

    /**
     * {@link #close()}, waiting at most {@code wait} for the flushers: a flusher stuck in a statement
     * (a database that stopped answering) is left behind, logged, and the entries still queued are
     * handed back to their runs, which journal them on their own. An entry the stuck batch commits
     * after all is found there by its id (first writer wins), so nothing is journaled twice.
     */
    void close(Duration wait) {
        closed = true;
        flushers.forEach(Thread::interrupt);
        long deadline = System.nanoTime() + wait.toNanos();
        for (Thread t : flushers) {
            try {
                if (!t.join(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())))) {
                    log.warn("waymark workflow: journal flusher {} still in a statement after {}; closing without it",
                            t.getName(), wait);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        for (Pending p; (p = queue.poll()) != null;) {
            p.outcome().complete(null);
        }
    }
}
