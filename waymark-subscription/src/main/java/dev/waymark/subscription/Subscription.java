package dev.waymark.subscription;

import dev.waymark.store.EventStore;
import dev.waymark.store.GlobalPosition;
import java.time.Duration;
import java.util.Optional;

/**
 * A running subscription: one thread reading a target (as a whole or as one consumer-group
 * member), delivering each event to its handler until acknowledged, in global order, at least
 * once, writing its checkpoint as it goes.
 */
public interface Subscription extends AutoCloseable {

    /** A builder for a subscription named {@code name} over {@code target}. */
    static SubscriptionBuilder builder(EventStore store, String name, Target target) {
        return new SubscriptionBuilder(store, name, target);
    }

    /** The configuration it runs with. */
    SubscriptionConfig config();

    /** The position of the last event handled (or skipped by the type filter) in this run. */
    GlobalPosition position();

    /** Whether the thread is still running. */
    boolean isRunning();

    /** The error that stopped it, if one did. */
    Optional<Throwable> failure();

    /** Waits for the subscription to stop; returns whether it did within the timeout. */
    boolean awaitTermination(Duration timeout) throws InterruptedException;

    /**
     * Stops: lets the delivery in flight finish for up to {@code grace}, then interrupts it (its
     * event is not acknowledged and is delivered again later), writes the checkpoint, and ends.
     *
     * @return whether it stopped
     */
    boolean stop(Duration grace);

    /** {@link #stop(Duration)} with a 30 s grace. */
    @Override
    default void close() {
        stop(Duration.ofSeconds(30));
    }
}
