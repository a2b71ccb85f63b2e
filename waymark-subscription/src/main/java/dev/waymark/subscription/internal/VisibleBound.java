package dev.waymark.subscription.internal;

import dev.waymark.store.GlobalPosition;
import dev.waymark.store.internal.Schema;
import dev.waymark.store.internal.SqlErrors;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * The visibility horizon as a position: every event below it is visible to readers (its writing
 * transaction, older than the oldest open one, has ended), and no event can ever be added below it.
 *
 * <p>A partitioned read walks the whole category (or store) from its cursor and keeps only its
 * member's streams, and a cursor moves only to the events it returns: a member with few events of
 * its own walked every other member's events from its last own event, on every poll and every
 * wake. Read before a page that came back short (so the page saw everything below this bound), the
 * bound is where that member's cursor can go instead.
 */
public final class VisibleBound {

    private VisibleBound() {}

    /**
     * Whether a committed event is still behind the horizon (a transaction with a smaller id is
     * open). A reader woken by its append found nothing of it, and that transaction's end will
     * signal nobody: the reader should look again soon rather than at its next poll.
     */
    public static boolean hiddenEventsExist(DataSource dataSource, String schema) {
        return Boolean.parseBoolean(single(dataSource, schema, "SELECT " + Schema.quote(schema)
                + ".has_hidden_events()::text", "probe for events behind the visibility horizon"));
    }

    /**
     * The position {@code (oldest open transaction id, 0)}: before every event of that transaction
     * (sequences start at 1) and after every event of every older one.
     */
    public static GlobalPosition read(DataSource dataSource, String schema) {
        return new GlobalPosition(Long.parseLong(single(dataSource, schema,
                "SELECT pg_snapshot_xmin(pg_current_snapshot())::text", "read the visibility horizon")), 0);
    }

    /** The one value {@code sql} returns, as text, on a connection of its own. */
    private static String single(DataSource dataSource, String schema, String sql, String action) {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        } catch (SQLException e) {
            throw SqlErrors.translate(e, action, schema);
        }
    }
}
