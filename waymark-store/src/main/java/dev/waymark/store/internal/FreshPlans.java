package dev.waymark.store.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.postgresql.PGStatement;

/**
 * Statements planned at every execution, for their parameters and the tables' current size.
 *
 * <p>pgjdbc prepares a statement on the server at its fifth execution on a connection, and the
 * server then keeps a generic plan until the next {@code ANALYZE} of a table it reads (autovacuum
 * runs that only after a table grew by a tenth, at most once a minute). A plan made while the event
 * table was small scans all of it once it has grown: a read of a page of 100 events then reads
 * every row. Reads of pages are few and large enough that planning each (tens of microseconds) costs
 * nothing that shows; reading a whole table per page would.
 */
public final class FreshPlans {

    private FreshPlans() {}

    /** {@code connection.prepareStatement(sql)}, never server-prepared when the driver is pgjdbc. */
    public static PreparedStatement prepare(Connection connection, String sql) throws SQLException {
        PreparedStatement statement = connection.prepareStatement(sql);
        try {
            if (statement.isWrapperFor(PGStatement.class)) {
                statement.unwrap(PGStatement.class).setPrepareThreshold(0);
            }
            return statement;
        } catch (SQLException | RuntimeException e) {
            statement.close();
            throw e;
        }
    }
}
