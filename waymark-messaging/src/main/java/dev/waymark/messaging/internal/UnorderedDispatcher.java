package dev.waymark.messaging.internal;

import dev.waymark.messaging.Ingested;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Semaphore;
import java.util.function.Consumer;

/** Up to n at once, in any order; a message starts only when a permit is free (backpressure). */
final class UnorderedDispatcher implements Dispatcher {

    private final Consumer<Ingested> work;
    private final ExecutorService executor;
    private final Semaphore permits;
    private final int n;

    UnorderedDispatcher(Consumer<Ingested> work, ExecutorService executor, int n) {
        this.work = work;
        this.executor = executor;
        this.permits = new Semaphore(n);
        this.n = n;
    }

    @Override
    public void dispatch(Ingested message) throws InterruptedException {
        permits.acquire();
        executor.execute(() -> {
            try {
                work.accept(message);
            } finally {
                permits.release();
            }
        });
    }

    @Override
    public void awaitIdle() throws InterruptedException {
        permits.acquire(n);
        permits.release(n);
    }

    @Override
    public int inFlight() {
        return n - permits.availablePermits();
    }
}
