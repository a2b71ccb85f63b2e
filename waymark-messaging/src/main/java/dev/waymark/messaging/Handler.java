package dev.waymark.messaging;

/** Decides about one message. A thrown exception is a retry after the processor's configured delay. */
@FunctionalInterface
public interface Handler {

    /** Handles a message. */
    AckDecision handle(Message message) throws Exception;
}
