package dev.waymark.store;

import dev.waymark.core.WaymarkConfigException;
import java.io.Serial;

/**
 * The event store's builder was given an invalid value; the message names the option, the value and
 * the rule. The store's member of the {@link WaymarkConfigException} branch.
 */
public final class StoreConfigException extends WaymarkConfigException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** An invalid option. */
    public StoreConfigException(String message) {
        super(message);
    }
}
