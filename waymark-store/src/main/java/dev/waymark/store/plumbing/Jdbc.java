package dev.waymark.store.plumbing;

import dev.waymark.store.EventStore;
import dev.waymark.store.QueryPurpose;
import dev.waymark.store.internal.Commits;
import dev.waymark.store.internal.JdbcEventStore;
import dev.waymark.store.internal.QueryCounts;
import dev.waymark.store.plumbing.StoreInternals;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * Runs Waymark's own database work, translating failures by SQLSTATE: a bounded transaction
 * ({@link TransactionBounds}) or a single autocommit statement, which holds nothing once the
 * server has run it, whatever happens to the calling process.
 */
public final class Jdbc {

    /** Work on a connection inside a transaction. */
    @FunctionalInterface
    public interface Work<T> {
        /** Does the work. */
        T run(Connection connection) throws SQLException;
    }

    private Jdbc() {}

    /**
     * Runs {@code work} in one transaction bounded by {@code store}'s {@link TransactionBounds}
     * (set by the transaction's first statement); commits on return, rolls back on any failure. A
     * bound that runs out fails with a retryable store exception naming it; nothing was committed.
     */
    public static <T> T inTransaction(EventStore store, String action, Work<T> work) {
        return inTransaction(store, QueryPurpose.OTHER, action, work);
    }

    /** {@link #inTransaction(EventStore, String, Work)}, counted under {@code purpose} in the store's query counts. */
    public static <T> T inTransaction(EventStore store, QueryPurpose purpose, String action, Work<T> work) {
        QueryCounts.of(store).count(purpose);
        return inTransaction(StoreInternals.of(store).dataSource(), store.schema(), TransactionBounds.of(store), action,
                work);
    }

    /**
     * {@link #inTransaction(EventStore, QueryPurpose, String, Work)} on the connection the store
     * handle holds for LISTEN, while it is up and the LISTEN thread lets it go within half a second,
     * for short periodic upkeep (a sharded pool's lease renewal) that should take nothing from the
     * pool: HikariCP validates a connection idle for more than 500 ms with an empty statement before
     * it hands it out, a transaction of its own on the server. Otherwise (notifications off, the
     * LISTEN connection not started or down, a handle Waymark did not build) on a pooled connection,
     * as {@code inTransaction}. Same bounds, same failures. When the LISTEN connection fails under
     * the work, the work runs again on a pooled connection, so it must be safe to run twice (its
     * first run may have committed). While it runs, the handle's notifications wait (the server
     * holds them until the transaction ends): keep it to a statement or two.
     */
    public static <T> T inTransactionOffPool(EventStore store, QueryPurpose purpose, String action, Work<T> work) {
        if (!(store instanceof JdbcEventStore handle)) {
            return inTransaction(store, purpose, action, work);
        }
        QueryCounts.of(store).count(purpose);
        TransactionBounds bounds = handle.transactionBounds();
        try {
            return handle.onListenConnection(c -> runOn(c, bounds, action, work));
        } catch (SQLException e) {
            throw bounds.translate(e, action, store.schema());
        }
    }

    /** {@link #inTransaction(EventStore, String, Work)} on a data source, with explicit bounds. */
    public static <T> T inTransaction(DataSource dataSource, String schema, TransactionBounds bounds, String action,
            Work<T> work) {
        try {
            return run(dataSource, bounds, action, work);
        } catch (SQLException e) {
            throw bounds.translate(e, action, schema);
        }
    }

    /**
     * Runs {@code work}, which must be one statement, on an autocommit connection of {@code store}:
     * the statement is its own transaction, begun and ended by the server, so no pause of this
     * process can keep it open.
     */
    public static <T> T autocommit(EventStore store, String action, Work<T> work) {
        return autocommit(store, QueryPurpose.OTHER, action, work);
    }

    /** {@link #autocommit(EventStore, String, Work)}, counted under {@code purpose} in the store's query counts. */
    public static <T> T autocommit(EventStore store, QueryPurpose purpose, String action, Work<T> work) {
        QueryCounts.of(store).count(purpose);
        try (Connection c = StoreInternals.of(store).dataSource().getConnection()) {
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true); // the README asks for autocommit connections; a pool may differ
            }
            return work.run(c);
        } catch (SQLException e) {
            throw SqlErrors.translate(e, action, store.schema());
        }
    }

    private static <T> T run(DataSource dataSource, TransactionBounds bounds, String action, Work<T> work)
            throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return runOn(c, bounds, action, work);
        }
    }

    /** Runs {@code work} in a bounded transaction on {@code c}, and restores its autocommit mode. */
    private static <T> T runOn(Connection c, TransactionBounds bounds, String action, Work<T> work)
            throws SQLException {
        boolean autoCommit = c.getAutoCommit();
        c.setAutoCommit(false);
        T result;
        try {
            bounds.apply(c);
            result = work.run(c);
            Commits.commit(c, action, null); // a failure the work caught must not pass for a commit
        } catch (SQLException | RuntimeException | Error e) {
            try {
                c.rollback();
            } catch (SQLException rollback) {
                e.addSuppressed(rollback);
            }
            try {
                restore(c, autoCommit);
            } catch (SQLException restore) {
                e.addSuppressed(restore);
            }
            throw e;
        }
        restore(c, autoCommit);
        return result;
    }

    /** Restores the connection's autocommit mode, unless the server has ended the connection. */
    private static void restore(Connection c, boolean autoCommit) throws SQLException {
        if (!c.isClosed()) {
            c.setAutoCommit(autoCommit);
        }
    }
}
