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

    <T, E extends Exception> T run(TransactionWork<T, E> work) throws E {
        Connection connection;
        try {
            connection = dataSource.getConnection();
        } catch (SQLException e) {
            throw SqlErrors.translate(e, "open a transaction", schema);
        }
        try {
            boolean autoCommit = connection.getAutoCommit();
            int isolation = connection.getTransactionIsolation();
            connection.setAutoCommit(false);
            if (isolation != Connection.TRANSACTION_READ_COMMITTED) {
                connection.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
            }
            try {
                T result = work.run(new JdbcEventStore.BoundTransaction(connection, appender));
                connection.commit();
                afterCommit.run();
                return result;
            } catch (Exception | Error e) {
                rollbackQuietly(connection, e);
                throw e;
            } finally {
                restore(connection, autoCommit, isolation);
            }
        } catch (SQLException e) {
            throw SqlErrors.translate(e, "transaction", schema);
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

    private static void restore(Connection connection, boolean autoCommit, int isolation) throws SQLException {
        if (connection.getTransactionIsolation() != isolation) {
            connection.setTransactionIsolation(isolation);
        }
        connection.setAutoCommit(autoCommit);
    }
}
