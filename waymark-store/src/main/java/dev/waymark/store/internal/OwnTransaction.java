package dev.waymark.store.internal;

import dev.waymark.store.plumbing.SqlErrors;
import dev.waymark.store.plumbing.TransactionBounds;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * Runs one append statement in a transaction of the store's own and commits it: on an autocommit
 * connection the statement is its own transaction; otherwise it runs under the store's
 * {@link TransactionBounds} and is committed or rolled back here. When the connection's isolation
 * is not READ COMMITTED (the append functions refuse it with WM002), the transaction is the
 * store's own, so it is run again at READ COMMITTED and the connection restored afterwards.
 */
final class OwnTransaction {

    /** The statement: runs on the connection, decodes its result before the commit. */
    @FunctionalInterface
    interface Call<T> {
        T run(Connection connection) throws SQLException;
    }

    private OwnTransaction() {}

    /** Runs {@code call} on {@code connection} in a transaction of its own and commits it. */
    static <T> T run(Connection connection, TransactionBounds bounds, Call<T> call) throws SQLException {
        boolean autoCommit = connection.getAutoCommit();
        try {
            return autoCommit ? call.run(connection) : commitOrRollBack(connection, bounds, call);
        } catch (SQLException e) {
            if (!SqlErrors.APPEND_ISOLATION.equals(e.getSQLState())) {
                throw e;
            }
            // The pool's (or the server's) default isolation is not READ COMMITTED. The
            // transaction is the store's own, so it sets the level for it (asking the
            // connection for its level on every append would cost a round trip).
            return atReadCommitted(connection, bounds, call, autoCommit);
        }
    }

    private static <T> T atReadCommitted(Connection connection, TransactionBounds bounds, Call<T> call,
            boolean autoCommit) throws SQLException {
        int isolation = connection.getTransactionIsolation();
        connection.setAutoCommit(false);
        connection.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        try {
            return commitOrRollBack(connection, bounds, call);
        } finally {
            connection.setTransactionIsolation(isolation);
            connection.setAutoCommit(autoCommit);
        }
    }

    private static <T> T commitOrRollBack(Connection connection, TransactionBounds bounds, Call<T> call)
            throws SQLException {
        try {
            // A pool without autocommit: the append is a transaction of the store's own, bounded as
            // every other (a process frozen between the append and the commit holds the horizon).
            bounds.apply(connection);
            T result = call.run(connection);
            connection.commit();
            return result;
        } catch (SQLException | RuntimeException e) {
            try {
                connection.rollback();
            } catch (SQLException rollback) {
                e.addSuppressed(rollback);
            }
            throw e;
        }
    }
}
