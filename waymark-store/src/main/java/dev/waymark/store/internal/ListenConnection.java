package dev.waymark.store.internal;

import dev.waymark.store.plumbing.Jdbc;
import dev.waymark.store.plumbing.TransactionBounds;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A store handle's LISTEN connection, lent between the LISTEN thread's waits to short transactions
 * of Waymark's own upkeep (a sharded pool's lease renewal). The handle holds that connection anyway,
 * so such work takes nothing from the pool, and the pool does not validate it: HikariCP checks a
 * connection idle for more than 500 ms with an empty statement before it hands it out, a
 * transaction of its own on the server, which for an idle process doubled the cost of every pass.
 *
 * <p>The LISTEN thread holds the lock while it waits for notifications (at most a quarter of a
 * second) and while its heartbeat runs; a borrower waits for it up to {@link #LEND_WAIT} (the lock
 * is fair: a waiting borrower goes before the LISTEN thread's next wait), and otherwise, or while the
 * connection is down, runs on a pooled connection as before. Notifications that arrive during a
 * borrowed transaction are held by the server until it ends and read by the next wait.
 */
final class ListenConnection {

    private static final Logger log = LoggerFactory.getLogger(ListenConnection.class);
    /** How long a borrower waits for the LISTEN thread to finish a wait or a heartbeat. */
    static final Duration LEND_WAIT = Duration.ofMillis(500);

    private final ReentrantLock lock = new ReentrantLock(true);
    private final String schema;
    /** The connection while the LISTEN thread listens on it, else null: written under {@link #lock}. */
    private volatile Connection current;
    /** The network timeout the LISTEN thread set on it (ms), or -1 when it could not set one. */
    private int listenTimeout = -1;

    ListenConnection(String schema) {
        this.schema = schema;
    }

    /** The LISTEN thread takes the connection for a wait or a heartbeat. */
    void lockForListener() {
        lock.lock();
    }

    /** The LISTEN thread gives the connection back. */
    void unlockForListener() {
        lock.unlock();
    }

    /**
     * The LISTEN thread listens on {@code connection} (autocommit on) from now on and lends it.
     *
     * @param networkTimeoutMillis the network timeout it set on it, or -1
     */
    void opened(Connection connection, int networkTimeoutMillis) {
        lock.lock();
        try {
            listenTimeout = networkTimeoutMillis;
            current = connection;
        } finally {
            lock.unlock();
        }
    }

    /** The LISTEN thread is about to close the connection: lent no more (waits for a borrower to finish). */
    void closing() {
        lock.lock();
        try {
            current = null;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Runs {@code work} on the LISTEN connection when it is up and free within {@link #LEND_WAIT},
     * with its network timeout raised to {@code readTimeout} meanwhile (the server's own bounds of
     * the work then run out first); else on a connection of {@code pool}. When the LISTEN connection
     * fails under the work (its backend or network path gone), the work runs again on a pooled
     * connection: it must be safe to run twice. The LISTEN thread notices the failure at its next
     * wait and reconnects.
     */
    <T> T run(Jdbc.Work<T> work, Duration readTimeout, DataSource pool) throws SQLException {
        Connection borrowed = borrow();
        if (borrowed != null) {
            try {
                raise(borrowed, readTimeout);
                return work.run(borrowed);
            } catch (SQLException e) {
                if (!broken(borrowed, e)) {
                    throw e;
                }
                log.debug("waymark: the LISTEN connection of schema {} failed under lent work, which runs on a"
                        + " pooled connection instead: {}", schema, e.toString());
            } finally {
                restore(borrowed);
                lock.unlock();
            }
        }
        try (Connection c = pool.getConnection()) {
            return work.run(c);
        }
    }

    /** The connection, locked, or null when it is down or busy beyond {@link #LEND_WAIT}. */
    private Connection borrow() {
        if (current == null) {
            return null;
        }
        try {
            if (!lock.tryLock(LEND_WAIT.toNanos(), TimeUnit.NANOSECONDS)) {
                return null;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the pooled path sees it, as it did before
            return null;
        }
        Connection c = current;
        if (c == null) {
            lock.unlock();
        }
        return c;
    }

    private void raise(Connection c, Duration readTimeout) throws SQLException {
        if (listenTimeout >= 0) {
            c.setNetworkTimeout(Runnable::run, (int) Math.min(Integer.MAX_VALUE, readTimeout.toMillis()));
        }
    }

    private void restore(Connection c) {
        try {
            if (listenTimeout >= 0 && !c.isClosed()) {
                c.setNetworkTimeout(Runnable::run, listenTimeout);
            }
        } catch (SQLException e) {
            // broken: the LISTEN thread's next wait fails and it reconnects
            log.debug("waymark: restoring the LISTEN connection's network timeout failed: {}", e.toString());
        }
    }

    /**
     * Whether {@code e} means the connection itself is gone (SQLSTATE class 08 or 57, or closed), not that
     * a bound of the work ran out (the server ends the session of a transaction left idle past it:
     * that failure is the work's, and is thrown as on a pooled connection).
     */
    private static boolean broken(Connection c, SQLException e) {
        if (TransactionBounds.exceeded(e)) {
            return false;
        }
        String state = e.getSQLState();
        // 08: connection exceptions; 57: the backend terminated (pg_terminate_backend, a shutdown)
        if (state != null && (state.startsWith("08") || state.startsWith("57"))) {
            return true;
        }
        try {
            return c.isClosed();
        } catch (SQLException closed) {
            return true;
        }
    }
}
