package dev.waymark.messaging.internal;

import dev.waymark.messaging.Ingested;

/** Runs messages through the handler under a concurrency mode. */
interface Dispatcher {

    /** Blocks until the message may start, then starts it (or runs it, for serial). */
    void dispatch(Ingested message) throws InterruptedException;

    /** Waits until every started message is finished. */
    void awaitIdle() throws InterruptedException;

    /** Messages started and not finished. */
    int inFlight();
}
