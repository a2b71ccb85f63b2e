package dev.waymark.store;

import java.io.Serial;

/**
 * A serialization failure or deadlock (SQLSTATE class 40) that persisted through the store's own
 * retry. Retrying the operation (with the same event ids) is safe.
 */
public final class TransientStoreException extends StoreException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** A transient failure. */
    public TransientStoreException(String message, String sqlState, Throwable cause) {
        super(message, sqlState, cause);
    }

    @Override
    public boolean isRetryable() {
        return true;
    }
}
