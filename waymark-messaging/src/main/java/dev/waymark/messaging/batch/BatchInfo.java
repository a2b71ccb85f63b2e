package dev.waymark.messaging.batch;

/**
 * What a batch handler is told about its batch.
 *
 * @param key the batch key all messages share
 * @param size how many messages, {@code >= 1}
 * @param trigger why the batch was closed
 */
public record BatchInfo(String key, int size, Trigger trigger) {

    /** Why a batch was closed. */
    public enum Trigger {
        /** It reached the batch size. */
        SIZE,
        /** Its oldest message waited the batch timeout. */
        TIMEOUT
    }
}
