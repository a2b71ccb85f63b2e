package dev.waymark.subscription;

import dev.waymark.store.DeadLetterReason;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.RecordedEvent;
import java.time.Duration;

/**
 * Observes a running subscription (metrics, logs, test conditions). Called on the subscription's
 * thread (but {@link #handlerStuck}, on its watchdog's); keep it fast. Exceptions thrown by a
 * listener are logged and ignored.
 */
public interface SubscriptionListener {

    /** The subscription resolved its start and begins reading after {@code position}. */
    default void started(SubscriptionConfig config, GlobalPosition position) {}

    /**
     * A read returned fewer events than the batch size (possibly none): every event visible when
     * it ran has been handled, and the subscription now waits for new ones. Events appended
     * meanwhile follow.
     */
    default void caughtUp(SubscriptionConfig config, GlobalPosition position) {}

    /** The handler answered {@code ack} for a delivery. */
    default void handled(SubscriptionConfig config, Delivery delivery, Ack ack) {}

    /** An event was dead-lettered (and the checkpoint moved past it). */
    default void deadLettered(SubscriptionConfig config, RecordedEvent event, DeadLetterReason reason, int attempts) {}

    /** The checkpoint was written. */
    default void checkpointed(SubscriptionConfig config, GlobalPosition position) {}

    /** A database or handler-independent failure; the subscription retries unless it stops. */
    default void failed(SubscriptionConfig config, Throwable error) {}

    /**
     * The handler has been running on {@code delivery} for {@code running}, longer than the
     * subscription's {@code stuckHandlerThreshold}, with no stop requested: the subscription makes
     * no progress. Reported once per delivery, on the subscription's watchdog thread (the
     * subscription's own is inside the handler); {@link #handlerUnstuck} follows when it returns.
     */
    default void handlerStuck(SubscriptionConfig config, Delivery delivery, Duration running) {}

    /** A handler reported by {@link #handlerStuck} returned (or threw) after {@code took}. */
    default void handlerUnstuck(SubscriptionConfig config, Delivery delivery, Duration took) {}

    /** The subscription stopped, after handling up to {@code position}; {@code error} is null on a clean stop. */
    default void stopped(SubscriptionConfig config, GlobalPosition position, Throwable error) {}

    /** A listener that does nothing. */
    SubscriptionListener NONE = new SubscriptionListener() {};
}
