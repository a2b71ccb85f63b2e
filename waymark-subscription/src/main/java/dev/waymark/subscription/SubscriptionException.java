package dev.waymark.subscription;

import dev.waymark.store.StoreException;
import java.io.Serial;

/** Base of the subscription module's exceptions. */
public class SubscriptionException extends StoreException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** A failure described by {@code message}. */
    public SubscriptionException(String message) {
        super(message);
    }

    /** A failure caused by {@code cause}. */
    public SubscriptionException(String message, Throwable cause) {
        super(message, null, cause);
    }
}
