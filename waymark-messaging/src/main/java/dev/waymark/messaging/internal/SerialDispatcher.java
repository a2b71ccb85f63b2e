package dev.waymark.messaging.internal;

import dev.waymark.messaging.Ingested;
import java.util.function.Consumer;

/** One at a time, on the processor loop's own thread. */
final class SerialDispatcher implements Dispatcher {

    private final Consumer<Ingested> work;
    private volatile int inFlight;

    SerialDispatcher(Consumer<Ingested> work) {
        this.work = work;
    }

    @Override
    public void dispatch(Ingested message) {
        inFlight = 1;
        try {
            work.accept(message);
        } finally {
            inFlight = 0;
        }
    }

    @Override
    public void awaitIdle() {}

    @Override
    public int inFlight() {
        return inFlight;
    }
}
