package dev.waymark.store.plumbing;

import dev.waymark.core.WaymarkException;
import dev.waymark.store.EventStore;
import dev.waymark.store.EventStoreBuilder;
import dev.waymark.store.StoreException;
import dev.waymark.store.StoreUnavailableException;
import dev.waymark.store.TransientStoreException;
import dev.waymark.store.internal.JdbcEventStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;

/**
 * The server-side bounds of a transaction Waymark opens for its own work (checkpoints, leases, dead
 * letters, workflow bookkeeping; DESIGN decision 8): {@code idle_in_transaction_session_timeout},
 * {@code lock_timeout} and {@code statement_timeout}, all {@code timeout}, set LOCAL for the
 * transaction by its first statement. A transaction whose process freezes (GC pause, SIGSTOP, a
 * paused VM) is ended by the server, with its session, {@code timeout} after its last statement
 * returned: it holds neither the visibility horizon nor a lease row longer. Never applied to the
 * application's own transactions ({@link EventStore#inTransaction}, appends on its connection).
 *
 * <p>Use: {@link Jdbc#inTransaction(EventStore, String, Jdbc.Work)}, or, on a connection managed
 * elsewhere, {@link #apply(Connection)} as the first statement after {@code setAutoCommit(false)}
 * and {@link #translate} for its failures.
 *
 * @param timeout the bound, as {@link EventStoreBuilder#internalTransactionTimeout} validated it
 */
public record TransactionBounds(Duration timeout) {

    /** The bounds of a store built with the default timeout. */
    public static final TransactionBounds DEFAULT = new TransactionBounds(
            EventStoreBuilder.DEFAULT_INTERNAL_TRANSACTION_TIMEOUT);

    /** {@code idle_in_transaction_session_timeout}: the server ended the session of an idle transaction. */
    static final String IDLE_TIMEOUT = "25P03";
    /** {@code statement_timeout}: the statement was cancelled. */
    static final String STATEMENT_TIMEOUT = "57014";

    // One round trip, sent with the transaction's BEGIN (the driver opens it lazily with the first
    // statement), so the transaction is never open without its bounds.
    private static final String SET = "SELECT set_config('idle_in_transaction_session_timeout', ?, true),"
            + " set_config('lock_timeout', ?, true), set_config('statement_timeout', ?, true)";

    /** Validates the timeout. */
    public TransactionBounds {
        if (timeout == null || timeout.toMillis() < 1 || timeout.toMillis() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("transaction timeout must be 1 ms to 24 days, got " + timeout);
        }
    }

    /** The bounds of {@code store}'s transactions ({@link #DEFAULT} for a store Waymark did not build). */
    public static TransactionBounds of(EventStore store) {
        return store instanceof JdbcEventStore s ? s.transactionBounds() : DEFAULT;
    }

    /** Sets the bounds LOCAL to the transaction open on {@code c} (autocommit off): one round trip. */
    public void apply(Connection c) throws SQLException {
        String ms = Long.toString(timeout.toMillis());
        try (PreparedStatement p = c.prepareStatement(SET)) {
            p.setString(1, ms);
            p.setString(2, ms);
            p.setString(3, ms);
            p.execute();
        }
    }

    /**
     * Whether {@code e} is one of the bounds running out: the transaction idle too long (the server
     * ended it and its session), a lock wait or a statement longer than the timeout.
     */
    public static boolean exceeded(SQLException e) {
        String state = e.getSQLState();
        return IDLE_TIMEOUT.equals(state) || SqlErrors.LOCK_NOT_AVAILABLE.equals(state)
                || STATEMENT_TIMEOUT.equals(state);
    }

    /**
     * {@code e}, raised while doing {@code action} in a bounded transaction, as a store exception:
     * a bound that ran out is named with its value (and is retryable: nothing of the transaction was
     * committed); anything else as {@link SqlErrors#translate}.
     */
    public WaymarkException translate(SQLException e, String action, String schema) {
        String state = e.getSQLState();
        String bound = " (Waymark's internal transaction timeout is " + timeout.toMillis() + " ms,"
                + " EventStoreBuilder.internalTransactionTimeout); nothing of the transaction was committed";
        if (IDLE_TIMEOUT.equals(state)) {
            return new StoreUnavailableException(action + " failed: the server ended the transaction and its session"
                    + " after it sat idle longer than idle_in_transaction_session_timeout (the process was paused"
                    + " or starved)" + bound + ": " + e.getMessage(), state, e);
        }
        if (SqlErrors.LOCK_NOT_AVAILABLE.equals(state)) {
            return new TransientStoreException(action + " failed: a lock wait ran out (lock_timeout)" + bound + ": "
                    + e.getMessage(), state, e);
        }
        if (STATEMENT_TIMEOUT.equals(state)) {
            return new StoreUnavailableException(action + " failed: a statement ran longer than statement_timeout"
                    + bound + ": " + e.getMessage(), state, e);
        }
        return SqlErrors.translate(e, action, schema);
    }
}
