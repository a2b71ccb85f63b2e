package dev.waymark.workflow.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * Statements that concurrent callers share: a caller that finds no statement under way makes one
 * for every request waiting (up to {@code maxBatch}); the callers that arrive meanwhile wait, and the
 * first of them makes the next statement when this one ends. Each answer comes from a statement sent
 * after its caller asked, so a read is as fresh as a read of its own and a write is made after it
 * was asked for; a lone caller pays nothing but the hand-off. The workflow runs' reads of the
 * database clock and of awakeables go through it, so that a thousand runs waiting at once cost a few
 * statements, not a thousand pool checkouts; so do awakeable settlements (one transaction for the
 * settlements made at the same moment, not one commit each).
 *
 * @param <K> what one caller asks for
 * @param <V> its answer
 */
final class SharedReads<K, V> {

    /** Completes a waiting request to tell its caller to make the next read. */
    private static final Object LEAD = new Object();

    private final Function<List<K>, List<V>> read;
    private final int maxBatch;
    private final ReentrantLock lock = new ReentrantLock();
    /** Guarded by {@link #lock}: the requests not yet read, oldest first. */
    private final List<Request<K>> pending = new ArrayList<>();
    /** Guarded by {@link #lock}: whether a caller runs a statement or is about to (then the next is its). */
    private boolean reading;

    /** Runs {@code read}, which answers a list of keys in order, at most {@code maxBatch} at a time. */
    SharedReads(Function<List<K>, List<V>> read, int maxBatch) {
        this.read = read;
        this.maxBatch = maxBatch;
    }

    private record Request<K>(K key, CompletableFuture<Object> answer) {}

    /** How many requests wait for a statement (for tests). */
    int pending() {
        lock.lock();
        try {
            return pending.size();
        } finally {
            lock.unlock();
        }
    }

    /** The answer for {@code key}, by this caller's statement or another's; what the statement throws is thrown. */
    @SuppressWarnings("unchecked")
    V get(K key) {
        Request<K> mine = new Request<>(key, new CompletableFuture<>());
        boolean lead;
        lock.lock();
        try {
            pending.add(mine);
            lead = !reading;
            reading = true;
        } finally {
            lock.unlock();
        }
        if (!lead && answer(mine) != LEAD) {
            return (V) answer(mine);
        }
        List<Request<K>> batch;
        lock.lock();
        try { // mine is the oldest pending request (a read leaves none older): it is read first
            int n = Math.min(maxBatch, pending.size());
            batch = new ArrayList<>(pending.subList(0, n));
            pending.subList(0, n).clear();
        } finally {
            lock.unlock();
        }
        V answer = null;
        Throwable failed = null;
        try {
            List<V> answers = read.apply(batch.stream().map(Request::key).toList());
            for (int i = 1; i < batch.size(); i++) {
                batch.get(i).answer().complete(answers.get(i));
            }
            answer = answers.get(0); // mine (its future may hold LEAD already)
        } catch (RuntimeException | Error e) {
            failed = e;
            batch.forEach(r -> r.answer().completeExceptionally(e));
        } finally {
            Request<K> next = null;
            lock.lock();
            try {
                if (pending.isEmpty()) {
                    reading = false;
                } else {
                    next = pending.get(0);
                }
            } finally {
                lock.unlock();
            }
            if (next != null) {
                next.answer().complete(LEAD);
            }
        }
        if (failed instanceof RuntimeException r) {
            throw r;
        }
        if (failed instanceof Error e) {
            throw e;
        }
        return answer;
    }

    /** The request's answer; what its read threw, unwrapped. */
    private static Object answer(Request<?> request) {
        try {
            return request.answer().join();
        } catch (java.util.concurrent.CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw e;
        }
    }
}
