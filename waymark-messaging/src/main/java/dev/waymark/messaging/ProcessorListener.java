package dev.waymark.messaging;

/**
 * Observes every handled message (metrics, logs, tests). Called on the handler's thread right
 * after the decision was finalized; keep it fast. Runtime exceptions, {@code LinkageError}s and
 * {@code AssertionError}s thrown by a listener are ignored.
 */
public interface ProcessorListener {

    /**
     * A message was handled and its decision finalized.
     *
     * @param processorId the processor
     * @param message the message
     * @param decision the decision that was finalized
     * @param handlerNanos time spent in the handler
     * @param error what the handler threw, an exception or an {@code Error} of its own such as an
     *     {@code AssertionError} (the decision is then a retry), or null
     */
    void handled(String processorId, Message message, AckDecision decision, long handlerNanos, Throwable error);

    /** A listener that does nothing. */
    ProcessorListener NONE = (processorId, message, decision, handlerNanos, error) -> {};
}
