package dev.waymark.store;

import java.io.Serial;

/**
 * A transaction the store was to commit on the caller's behalf had been aborted by PostgreSQL: a
 * statement inside it failed, and the work caught the failure and returned instead of throwing.
 * PostgreSQL answers COMMIT of such a transaction with a rollback, so the store rolled it back and
 * reports it: nothing of the transaction was committed, no event of it exists, and no reader was
 * woken. {@link #getCause()} is the first failure the store saw inside the transaction (an append's
 * conflict or refusal, say), or null when the failure was the application's own statement, which
 * the store does not see.
 *
 * <p>Let the failure propagate out of the work instead, or, to go on after a failed statement, roll
 * back to a savepoint taken before it.
 */
public final class TransactionAbortedException extends StoreException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** The SQLSTATE PostgreSQL gives a statement sent in an aborted transaction (in_failed_sql_transaction). */
    public static final String SQL_STATE = "25P02";

    /** An aborted transaction, described by {@code message}, first failing with {@code firstError} (or null). */
    public TransactionAbortedException(String message, Throwable firstError) {
        super(message, SQL_STATE, firstError);
    }

    /**
     * The exception for the transaction that did {@code action}, with the message naming
     * {@code firstError} when known.
     */
    public static TransactionAbortedException of(String action, Throwable firstError) {
        String first = firstError == null
                ? "the failed statement was the work's own, which the store does not see"
                : "first error: " + firstError.getMessage();
        return new TransactionAbortedException(action + " failed: PostgreSQL aborted the transaction (a statement"
                + " in it failed, and the work caught the failure and returned normally), so it was rolled back"
                + " and nothing was committed; " + first + ". Let the failure propagate out of the work, or roll"
                + " back to a savepoint taken before the failing statement to go on", firstError);
    }
}
