package dev.waymark.messaging;

import java.io.Serial;

/** Base of the messaging runtime's exceptions. */
public class MessagingException extends RuntimeException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** A failure, with its cause if any. */
    public MessagingException(String message, Throwable cause) {
        super(message, cause);
    }
}
