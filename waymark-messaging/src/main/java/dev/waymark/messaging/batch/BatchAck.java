package dev.waymark.messaging.batch;

import dev.waymark.messaging.AckDecision;
import java.util.Map;

/**
 * A batch handler's decisions: one per message id where given, the fallback for the rest.
 *
 * @param decisions decisions by message id
 * @param fallback the decision of every message not in {@code decisions}
 */
public record BatchAck(Map<String, AckDecision> decisions, AckDecision fallback) {

    /** Validates and copies. */
    public BatchAck {
        decisions = Map.copyOf(decisions);
        if (fallback == null) {
            throw new IllegalArgumentException("fallback decision must not be null");
        }
    }

    /** Every message ok. */
    public static BatchAck allOk() {
        return new BatchAck(Map.of(), AckDecision.ok());
    }

    /** Every message gets {@code decision}. */
    public static BatchAck all(AckDecision decision) {
        return new BatchAck(Map.of(), decision);
    }

    /** The given messages get their decisions, the rest {@code fallback}. */
    public static BatchAck except(Map<String, AckDecision> overrides, AckDecision fallback) {
        return new BatchAck(overrides, fallback);
    }

    /** The decision of one message. */
    public AckDecision decisionFor(String messageId) {
        return decisions.getOrDefault(messageId, fallback);
    }
}
