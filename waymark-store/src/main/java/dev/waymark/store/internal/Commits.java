package dev.waymark.store.internal;

import dev.waymark.store.TransactionAbortedException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

/**
 * Commits that never mistake a rollback for a commit. After a statement failed, PostgreSQL keeps
 * the transaction open but aborted: every later statement fails, and COMMIT answers ROLLBACK
 * without an error (pgjdbc reports nothing either). Work that caught the failure and returned
 * would otherwise look committed.
 */
public final class Commits {

    /** SQLSTATE of a statement sent in an aborted transaction: in_failed_sql_transaction. */
    static final String IN_FAILED_TRANSACTION = "25P02";

    private Commits() {}

    /**
     * Commits the open transaction of {@code connection}, or, when PostgreSQL aborted it, rolls it
     * back and throws.
     *
     * @param action what the transaction did, for the message ("run the work of inTransaction")
     * @param firstError the first failure inside the transaction that the store saw, or null
     * @throws TransactionAbortedException when the transaction was aborted; nothing was committed
     * @throws SQLException when the commit, the rollback or the check itself failed
     */
    public static void commit(Connection connection, String action, Throwable firstError) throws SQLException {
        if (aborted(connection)) {
            TransactionAbortedException failure = TransactionAbortedException.of(action, firstError);
            try {
                connection.rollback();
            } catch (SQLException rollback) {
                failure.addSuppressed(rollback);
            }
            throw failure;
        }
        connection.commit();
    }

    /**
     * Whether PostgreSQL aborted the open transaction of {@code connection}. pgjdbc tracks the
     * server's transaction status from every reply, so asking it costs nothing; a connection that
     * does not unwrap to pgjdbc's (a wrapper that hides its delegate) is asked with a statement,
     * which fails with {@value #IN_FAILED_TRANSACTION} in an aborted transaction.
     */
    static boolean aborted(Connection connection) throws SQLException {
        if (connection.isWrapperFor(BaseConnection.class)) {
            return connection.unwrap(BaseConnection.class).getTransactionState() == TransactionState.FAILED;
        }
        try (Statement probe = connection.createStatement()) {
            probe.execute("SELECT 1");
            return false;
        } catch (SQLException e) {
            if (IN_FAILED_TRANSACTION.equals(e.getSQLState())) {
                return true;
            }
            throw e;
        }
    }
}
