package dev.waymark.store;

import java.io.Serial;

/** A builder was given an invalid value; the message names the option, the value and the rule. */
public final class StoreConfigException extends StoreException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** An invalid option. */
    public StoreConfigException(String message) {
        super(message);
    }
}
