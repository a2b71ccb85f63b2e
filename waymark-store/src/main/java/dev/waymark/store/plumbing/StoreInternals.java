package dev.waymark.store.plumbing;

import dev.waymark.store.BroadcastRegistration;
import dev.waymark.store.EventStore;
import dev.waymark.store.InvalidInputException;
import dev.waymark.store.internal.JdbcEventStore;
import java.util.function.Consumer;
import javax.sql.DataSource;

/**
 * The parts of an {@link EventStore} handle that Waymark's own modules (subscriptions, workflows,
 * messaging, the CLI) build on and that are not part of the store's user-facing interface: its
 * data source, the wake-up after a commit made outside the store, and the cross-process broadcast.
 * Plumbing shared between Waymark's modules, not an API for applications: it may change in any
 * release.
 */
public final class StoreInternals {

    /** Longest topic of {@link #broadcast}, in characters. */
    public static final int MAX_TOPIC = 64;

    /** Longest message of {@link #broadcast}, in characters (a NOTIFY payload holds under 8,000 bytes). */
    public static final int MAX_BROADCAST_MESSAGE = 1_000;

    private final JdbcEventStore store;

    private StoreInternals(JdbcEventStore store) {
        this.store = store;
    }

    /**
     * The internals of {@code store}, a handle made by {@link EventStore#builder}.
     *
     * @throws InvalidInputException if {@code store} is null or another implementation of the interface
     */
    public static StoreInternals of(EventStore store) {
        if (store instanceof JdbcEventStore jdbc) {
            return new StoreInternals(jdbc);
        }
        throw new InvalidInputException("not an event store made by EventStore.builder: "
                + (store == null ? "null" : store.getClass().getName()));
    }

    /** The data source the store uses (the caller's; closing the store does not close it). */
    public DataSource dataSource() {
        return store.dataSource();
    }

    /**
     * Wakes readers after a commit made on a connection of the caller's (an append with
     * {@link EventStore#append(java.sql.Connection, String, dev.waymark.store.ExpectedVersion, java.util.List)},
     * or writes a reader waits for): the local waiters at once, other handles through the coalesced
     * NOTIFY. Correctness never depends on it; without it, readers learn of the commit on their
     * fallback poll.
     */
    public void signalAppended() {
        store.signalAppended();
    }

    /**
     * Sends {@code message} on {@code topic} to every store handle on this schema, in this process
     * and in others: the listeners of this handle are called at once on the calling thread (what
     * they throw is logged, except a virtual-machine error such as out of memory, which escapes once
     * the NOTIFY went out), then a NOTIFY is sent, outside any transaction, and the listeners of
     * other handles are called on their LISTEN thread. A hint, not a queue: a handle whose LISTEN
     * connection is down at that moment misses the message, and a failed NOTIFY is logged, not
     * thrown. Use it for news whose loss only delays something that a read of the database decides
     * anyway. Nothing is sent when notifications are disabled; local listeners still hear it.
     *
     * @throws InvalidInputException if the topic is blank, longer than {@value #MAX_TOPIC}
     *     characters or holds a control character, or the message is longer than
     *     {@value #MAX_BROADCAST_MESSAGE} characters or holds a control character
     */
    public void broadcast(String topic, String message) {
        store.broadcast(topic, message);
    }

    /**
     * Calls {@code listener} with every message {@link #broadcast broadcast} on {@code topic} on
     * this schema from now on, each once per handle, in the order the handle received them. A
     * listener of another handle's message runs on this handle's LISTEN thread: keep it short; what
     * it throws is logged and ignored.
     *
     * @return closing it removes the listener
     * @throws InvalidInputException if the topic is not valid (see {@link #broadcast}) or the listener is null
     */
    public BroadcastRegistration onBroadcast(String topic, Consumer<String> listener) {
        return store.onBroadcast(topic, listener);
    }
}
