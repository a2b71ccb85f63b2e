package dev.waymark.subscription;

import dev.waymark.store.StoreException;
import java.io.Serial;

/**
 * Base of the subscription module's runtime exceptions: the state kept in the database does not
 * allow the operation (a lease lost, a checkpoint missing, a consumer group resized, a dead letter
 * that does not exist). Part of the storage branch ({@link StoreException}); invalid options are
 * {@link SubscriptionConfigException}s instead (the configuration branch).
 */
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
