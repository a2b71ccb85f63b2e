package dev.waymark.store;

/**
 * A listener added by {@link dev.waymark.store.plumbing.StoreInternals#onBroadcast}; closing it removes the listener (idempotent).
 * Each registration is its own: a listener registered twice is called twice per message, and
 * closing one of its registrations, once or more, leaves the other in place.
 */
@FunctionalInterface
public interface BroadcastRegistration extends AutoCloseable {

    /**
     * Removes the listener: no message that arrives after this returns reaches it (a delivery
     * already under way on another thread may still call it once).
     */
    @Override
    void close();
}
