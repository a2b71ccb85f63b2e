package dev.waymark.store;

import java.io.Serial;

/**
 * A serialization failure or deadlock (SQLSTATE 40001, 40P01) that persisted through the store's
 * own retry, or a lock wait that ran out ({@code lock_timeout}, 55P03). Retrying the operation (with
 * the same event ids) is safe.
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
