package dev.waymark.messaging.internal;

import dev.waymark.messaging.Ingested;
import dev.waymark.messaging.MessageKey;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * Up to n handlers at once; messages of one ordering key (equal bytes) run (and are acknowledged) one after
 * another in arrival order, different keys in parallel, null keys unconstrained. At most 2n
 * messages wait inside the dispatcher, so it never reads far ahead of its handlers.
 */
final class KeyedDispatcher implements Dispatcher {

    private final Consumer<Ingested> work;
    private final ExecutorService executor;
    private final int n;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    /** Keys with a running chain, and the messages queued behind it. */
    private final Map<MessageKey, ArrayDeque<Ingested>> chains = new HashMap<>();
    private int running;
    private int pending;

    KeyedDispatcher(Consumer<Ingested> work, ExecutorService executor, int n) {
        this.work = work;
        this.executor = executor;
        this.n = n;
    }

    @Override
    public void dispatch(Ingested message) throws InterruptedException {
        MessageKey key = message.envelope().orderingKey();
        lock.lockInterruptibly();
        try {
            while (pending >= 2 * n) {
                changed.await();
            }
            if (key != null && chains.containsKey(key)) {
                chains.get(key).addLast(message); // runs after the key's earlier messages
                pending++;
                return;
            }
            while (running >= n) {
                changed.await();
            }
            running++;
            if (key != null) {
                chains.put(key, new ArrayDeque<>());
            }
        } finally {
            lock.unlock();
        }
        executor.execute(() -> runChain(key, message));
    }

    private void runChain(MessageKey key, Ingested first) {
        Ingested next = first;
        boolean released = false;
        try {
            while (!released) {
                work.accept(next);
                next = takeNext(key);
                released = next == null;
            }
        } finally {
            if (!released) {
                abandon(key); // the work threw (the processor has failed): awaitIdle must not wait for it
            }
        }
    }

    /** The key's next queued message, or null after releasing the chain and its slot. */
    private Ingested takeNext(MessageKey key) {
        lock.lock();
        try {
            ArrayDeque<Ingested> queue = key == null ? null : chains.get(key);
            Ingested next = queue == null ? null : queue.pollFirst();
            if (next != null) {
                pending--;
            } else {
                if (key != null) {
                    chains.remove(key);
                }
                running--;
            }
            changed.signalAll();
            return next;
        } finally {
            lock.unlock();
        }
    }

    /** Releases the chain and its slot; the messages queued behind it stay unfinalized. */
    private void abandon(MessageKey key) {
        lock.lock();
        try {
            ArrayDeque<Ingested> queue = key == null ? null : chains.remove(key);
            if (queue != null) {
                pending -= queue.size();
            }
            running--;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void awaitIdle() throws InterruptedException {
        lock.lockInterruptibly();
        try {
            while (running > 0 || pending > 0) {
                changed.await();
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int inFlight() {
        lock.lock();
        try {
            return running;
        } finally {
            lock.unlock();
        }
    }
}
