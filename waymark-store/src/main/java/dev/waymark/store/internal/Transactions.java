package dev.waymark.store.internal;

import dev.waymark.store.StoreException;
import dev.waymark.store.TransactionAbortedException;
import dev.waymark.store.TransactionWork;
import dev.waymark.store.plumbing.SqlErrors;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs caller work in a READ COMMITTED transaction of the store's, then wakes readers.
 *
 * <p>An append of the work that is refused because the transaction got its id before it locked
 * the stream (a write, a row lock, a temporary table or nextval() came first) does not reach the
 * caller: the transaction is rolled back and the work runs again with the locks of every stream
 * the refused run appended to taken as the transaction's first statement, before anything can
 * give it an id (see {@link TransactionAttempt} for how many runs). The SQL function
 * {@code append_events} accepts those appends, and the migration that taught it so (V16) gives
 * the ordering argument.
 */
final class Transactions {

    private static final Logger log = LoggerFactory.getLogger(Transactions.class);

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
     * (begin, the second run's stream locks, commit) are translated into store exceptions. A
     * transaction that PostgreSQL aborted while the work returned normally is rolled back and
     * reported as a {@link TransactionAbortedException}; readers are woken only after a commit.
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
            TransactionAttempt attempt = TransactionAttempt.first(connection, appender);
            while (true) {
                T result;
                try {
                    attempt.lockFirst();
                    result = work.run(attempt);
                } catch (Exception | Error e) {
                    rollbackQuietly(connection, e);
                    if (e instanceof Exception thrown && attempt.wantsAnotherRun()) {
                        // what the work threw came from (or after) the refused append: the next run decides
                        attempt = nextRun(attempt, thrown);
                        continue;
                    }
                    restoreQuietly(connection, autoCommit, isolation, e);
                    throw e;
                }
                if (attempt.wantsAnotherRun()) { // the work caught the refusal and returned
                    try {
                        connection.rollback();
                    } catch (SQLException e) {
                        restoreQuietly(connection, autoCommit, isolation, e);
                        throw SqlErrors.translate(e, "roll back a refused run of a transaction", schema);
                    }
                    attempt = nextRun(attempt, null);
                    continue;
                }
                try {
                    Commits.commit(connection, "inTransaction", attempt.firstError());
                } catch (TransactionAbortedException e) {
                    restoreQuietly(connection, autoCommit, isolation, e);
                    throw e;
                } catch (SQLException e) {
                    rollbackQuietly(connection, e);
                    restoreQuietly(connection, autoCommit, isolation, e);
                    throw SqlErrors.translate(e, "commit a transaction", schema);
                }
                // committed: a connection that cannot be reset is discarded by the pool, the work stands
                restoreQuietly(connection, autoCommit, isolation, null);
                afterCommit.run();
                return result;
            }
        } finally {
            try {
                connection.close();
            } catch (SQLException ignored) {
                // returned to the pool broken; the pool discards it
            }
        }
    }

    private static TransactionAttempt nextRun(TransactionAttempt refused, Exception thrown) {
        TransactionAttempt next = refused.nextRun();
        if (log.isDebugEnabled()) {
            StoreException refusal = refused.firstError();
            log.debug("inTransaction: run {} was refused ({}); running the work again{}",
                    refused.run(), refusal == null ? "no message" : refusal.getMessage(),
                    thrown == null || thrown == refusal ? "" : " (the run threw " + thrown + ")");
        }
        return next;
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
