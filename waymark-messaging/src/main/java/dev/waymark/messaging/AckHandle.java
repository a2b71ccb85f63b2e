package dev.waymark.messaging;

/**
 * The adapter's mechanical acknowledgement of one message. The runtime calls it once per delivery
 * after the handler decided, and may call it again with the <em>same</em> decision when it threw:
 * implementations must be idempotent (or track their phase) and must throw on failure, never
 * swallow it.
 */
@FunctionalInterface
public interface AckHandle {

    /** Carries out the decision at the source (commit, seek back, dead-letter, pause). */
    void finalize(AckDecision decision) throws Exception;
}
