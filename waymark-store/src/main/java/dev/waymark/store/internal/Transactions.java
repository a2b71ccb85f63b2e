package dev.waymark.store.internal;

import dev.waymark.store.TransactionWork;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/** Runs caller work in a READ COMMITTED transaction of the store's, then wakes readers. */
final class Transactions {

    private final DataSource dataSource;
    private final String schema;
    private final Appender appender;
    private final Runnable afterCommit;

    Transactions(DataSource dataSource, String schema, Appender appender, Runnable afterCommit) {
        this.dataSource = dataSource;
        this.schema = schema;
        this.appender = appender;
        this.afterCommit = afterCommit;
    }

    /**
     * Runs {@code work}. What the work throws (its own {@code SQLException} on the transaction's
     * connection too) rolls back and reaches the caller unchanged; only the store's own statements
     * (begin, commit) are translated into store exceptions.
     */
    <T, E extends Exception> T run(TransactionWork<T, E> work) throws E {
        Connection connection;
        try {
            connection = dataSource.getConnection();
        } catch (SQLException e) {
            throw SqlErrors.translate(e, "open a transaction", schema);
        }
        try {
            boolean autoCommit;
            int isolation;
            try {
                autoCommit = connection.getAutoCommit();
                isolation = connection.getTransactionIsolation();
                connection.setAutoCommit(false);
                if (isolation != Connection.TRANSACTION_READ_COMMITTED) {
                    connection.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
                }
            } catch (SQLException e) {
                throw SqlErrors.translate(e, "begin a transaction", schema);
            }
            T result;
            try {
                result = work.run(new JdbcEventStore.BoundTransaction(connection, appender));
            } catch (Exception | Error e) {
                rollbackQuietly(connection, e);
                restoreQuietly(connection, autoCommit, isolation, e);
                throw e;
            }
            try {
                connection.commit();
            } catch (SQLException e) {
                rollbackQuietly(connection, e);
                restoreQuietly(connection, autoCommit, isolation, e);
                throw SqlErrors.translate(e, "commit a transaction", schema);
            }
            // committed: a connection that cannot be reset is discarded by the pool, the work stands
            restoreQuietly(connection, autoCommit, isolation, null);
            afterCommit.run();
            return result;
        } finally {
            try {
                connection.close();
            } catch (SQLException ignored) {
                // returned to the pool broken; the pool discards it
            }
        }
    }

    private static void rollbackQuietly(Connection connection, Throwable cause) {
        try {
            connection.rollback();
        } catch (SQLException rollback) {
            cause.addSuppressed(rollback);
        }
    }

    /** Resets the connection's settings; a failure is attached to {@code cause} (or ignored), never thrown. */
    private static void restoreQuietly(Connection connection, boolean autoCommit, int isolation, Throwable cause) {
        try {
            if (connection.getTransactionIsolation() != isolation) {
                connection.setTransactionIsolation(isolation);
            }
            connection.setAutoCommit(autoCommit);
        } catch (SQLException e) {
            if (cause != null) {
                cause.addSuppressed(e);
            }
        }
    }
}
