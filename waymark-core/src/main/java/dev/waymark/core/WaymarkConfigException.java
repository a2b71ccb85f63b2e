package dev.waymark.core;

import java.io.Serial;

/**
 * The configuration branch of {@link WaymarkException}: a builder or an options object was given an
 * invalid value. Thrown when the value is set or at {@code build()} / {@code start}, before any
 * thread starts or anything is written; the message names the option, the value and the rule. Each
 * module has its own subtype ({@code StoreConfigException}, {@code SubscriptionConfigException},
 * {@code WorkflowConfigException}, {@code MessagingConfigException}); catch this type to handle
 * all of them.
 */
public class WaymarkConfigException extends WaymarkException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** An invalid option described by {@code message}. */
    public WaymarkConfigException(String message) {
        super(message);
    }

    /** An invalid option described by {@code message}, found while parsing {@code cause}. */
    public WaymarkConfigException(String message, Throwable cause) {
        super(message, cause);
    }
}
