package dev.waymark.store;

import java.io.Serial;

/**
 * An append inside a caller's transaction was refused because the transaction had already
 * written (it holds a transaction id) or does not run at READ COMMITTED. Both would let a reader
 * skip events or see a stream out of order. Do the append first, then the other writes.
 * The caller's transaction is aborted and must be rolled back.
 */
public final class AppendRefusedException extends StoreException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** A refusal described by the database's {@code message}. */
    public AppendRefusedException(String message, String sqlState, Throwable cause) {
        super(message, sqlState, cause);
    }
}
