package dev.waymark.store;

import java.io.Serial;

/**
 * The database could not be reached, the connection broke, or the pool timed out (SQLSTATE
 * classes 08 and 57, 53300 too many connections, pool timeouts). An append that fails this way may or may not have committed:
 * retry it with the same event ids and treat {@link DuplicateEventException} as success.
 */
public final class StoreUnavailableException extends StoreException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** An unavailable database. */
    public StoreUnavailableException(String message, String sqlState, Throwable cause) {
        super(message, sqlState, cause);
    }

    @Override
    public boolean isRetryable() {
        return true;
    }
}
