package dev.waymark.messaging;

import java.io.Serial;

/** A processor failed: finalization was exhausted for a message, or its source failed. */
public final class ProcessorFailedException extends MessagingException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final String processorId;
    private final String messageId;

    /** Processor {@code processorId} failed, on {@code messageId} (or null). */
    public ProcessorFailedException(String processorId, String messageId, String message, Throwable cause) {
        super("processor '" + processorId + "' failed" + (messageId == null ? "" : " on message " + messageId) + ": "
                + message, cause);
        this.processorId = processorId;
        this.messageId = messageId;
    }

    /** The processor. */
    public String processorId() {
        return processorId;
    }

    /** The message whose finalization failed, or null. */
    public String messageId() {
        return messageId;
    }
}
