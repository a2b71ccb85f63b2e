package dev.waymark.subscription;

/**
 * Handles deliveries one at a time, in global order. Delivery is at least once: make handling
 * idempotent (key on {@code event().eventId()}). A thrown exception, or an {@link Error} other than
 * a {@link VirtualMachineError} (a {@link StackOverflowError} counts as the handler's), is a retry
 * after the subscription's configured delay, and a dead letter once the attempts are spent. A
 * handler that throws while its subscription stops acknowledges nothing: the event is delivered
 * again after the restart.
 */
@FunctionalInterface
public interface EventHandler {

    /** Handles one delivery and says what happens next. */
    Ack handle(Delivery delivery) throws Exception;
}
