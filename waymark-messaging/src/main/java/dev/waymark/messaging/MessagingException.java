package dev.waymark.messaging;

import dev.waymark.core.WaymarkException;
import java.io.Serial;

/**
 * Base of the messaging runtime's exceptions (a processor or a source failed). A direct subclass of
 * Waymark's root {@link WaymarkException}; invalid options are {@link MessagingConfigException}s
 * (the configuration branch), not subtypes of this class.
 */
public class MessagingException extends WaymarkException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** A failure, with its cause if any. */
    public MessagingException(String message, Throwable cause) {
        super(message, cause);
    }
}
