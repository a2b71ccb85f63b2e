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

    /**
     * Whether this delivery no longer counts: the source will deliver the message again (for
     * example an earlier message of its partition was retried and the source seeks back, or the
     * partition was reassigned). The runtime checks it just before calling the handler and skips a
     * superseded delivery without handling or finalizing it, so a successor of a retried message is
     * never handled before the retried one where messages are processed in order. Default: never.
     */
    default boolean isSuperseded() {
        return false;
    }
}
