package dev.waymark.messaging.internal;

import dev.waymark.messaging.Ingested;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/** One at a time, on the processor loop's own thread. */
final class SerialDispatcher implements Dispatcher {

    private final Consumer<Ingested> work;
    /** Written by the loop thread only, read by snapshots: ordered stores, no fence per message. */
    private final AtomicInteger inFlight = new AtomicInteger();

    SerialDispatcher(Consumer<Ingested> work) {
        this.work = work;
    }

    @Override
    public void dispatch(Ingested message) {
        inFlight.lazySet(1);
        try {
            work.accept(message);
        } finally {
            inFlight.lazySet(0);
        }
    }

    @Override
    public void awaitIdle() {}

    @Override
    public int inFlight() {
        return inFlight.get();
    }
}
