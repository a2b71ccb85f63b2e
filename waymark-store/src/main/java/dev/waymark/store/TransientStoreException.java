package dev.waymark.store;

import java.io.Serial;

/**
 * A transaction rollback (SQLSTATE class 40: a serialization failure 40001, a deadlock 40P01, ...)
 * that persisted through the store's own retries of an append (or hit an operation the store does
 * not retry, such as one inside the caller's transaction), or a lock wait that ran out
 * ({@code lock_timeout}, 55P03). Retrying the operation (with the same event ids) is safe.
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
