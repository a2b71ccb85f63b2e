package dev.waymark.store;

import java.io.Serial;

/**
 * An append inside a caller's transaction was refused because the transaction got its
 * transaction id (at a write, {@code SELECT ... FOR UPDATE}, a temporary table, {@code nextval()})
 * before it locked the stream (SQLSTATE {@code WM001}), or because it does not run at READ
 * COMMITTED ({@code WM002}). Either would let a reader see the stream out of order. The message
 * names the cause and the remedy: append first, lock the streams first
 * ({@link EventStore#lockStreams}), or let {@link EventStore#inTransaction} run the work again.
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
