package dev.waymark.store;

/** A listener added by {@link EventStore#onBroadcast}; closing it removes the listener (idempotent). */
@FunctionalInterface
public interface BroadcastRegistration extends AutoCloseable {

    /**
     * Removes the listener: no message that arrives after this returns reaches it (a delivery
     * already under way on another thread may still call it once).
     */
    @Override
    void close();
}
