package dev.waymark.messaging;

/**
 * Observes every handled message (metrics, logs, tests). Called on the handler's thread right
 * after the decision was finalized; keep it fast. Exceptions thrown by a listener are ignored.
 */
public interface ProcessorListener {

    /**
     * A message was handled and its decision finalized.
     *
     * @param processorId the processor
     * @param message the message
     * @param decision the decision that was finalized
     * @param handlerNanos time spent in the handler
     * @param error the handler's exception (the decision is then a retry), or null
     */
    void handled(String processorId, Message message, AckDecision decision, long handlerNanos, Throwable error);

    /** A listener that does nothing. */
    ProcessorListener NONE = (processorId, message, decision, handlerNanos, error) -> {};
}
