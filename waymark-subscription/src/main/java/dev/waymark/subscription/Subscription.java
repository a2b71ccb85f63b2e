package dev.waymark.subscription;

import dev.waymark.store.EventStore;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Stoppable;
import java.time.Duration;
import java.util.Optional;

/**
 * A running subscription: one thread reading a target (as a whole or as one consumer-group
 * member), delivering each event to its handler until acknowledged, in global order, at least
 * once, writing its checkpoint as it goes.
 */
public interface Subscription extends Stoppable {

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
     * event is not acknowledged and is delivered again later) and waits up to 10 s more for the
     * handler to return, writes the checkpoint, and ends. {@link #close()} is {@code stop(30 s)}.
     *
     * @return whether the subscription's thread had ended when the call returned
     * @throws IllegalArgumentException if {@code grace} is null or negative
     */
    @Override
    boolean stop(Duration grace);
}
