package dev.waymark.store.internal;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/** Runs statements in a transaction of their own, translating failures by SQLSTATE. */
public final class Jdbc {

    /** Work on a connection inside a transaction. */
    @FunctionalInterface
    public interface Work<T> {
        /** Does the work. */
        T run(Connection connection) throws SQLException;
    }

    private Jdbc() {}

    /** Runs {@code work} in one transaction; commits on return, rolls back on any failure. */
    public static <T> T inTransaction(DataSource dataSource, String schema, String action, Work<T> work) {
        try (Connection c = dataSource.getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(false);
            try {
                T result = work.run(c);
                c.commit();
                return result;
            } catch (SQLException | RuntimeException | Error e) {
                try {
                    c.rollback();
                } catch (SQLException rollback) {
                    e.addSuppressed(rollback);
                }
                throw e;
            } finally {
                c.setAutoCommit(autoCommit);
            }
        } catch (SQLException e) {
            throw SqlErrors.translate(e, action, schema);
        }
    }
}
