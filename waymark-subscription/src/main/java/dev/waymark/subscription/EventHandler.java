package dev.waymark.subscription;

/**
 * Handles deliveries one at a time, in global order. Delivery is at least once: make handling
 * idempotent (key on {@code event().eventId()}). A thrown exception is a retry after the
 * subscription's configured delay.
 */
@FunctionalInterface
public interface EventHandler {

    /** Handles one delivery and says what happens next. */
    Ack handle(Delivery delivery) throws Exception;
}
