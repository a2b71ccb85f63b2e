package dev.waymark.store.internal;

import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Horizon;
import dev.waymark.store.InvalidInputException;
import dev.waymark.store.Partition;
import dev.waymark.store.RecordedEvent;
import dev.waymark.store.StreamNames;
import dev.waymark.store.plumbing.Schema;
import dev.waymark.store.plumbing.SqlErrors;
import dev.waymark.store.plumbing.Utf16;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * Reads of one stream, a category, or all streams. Category and all-stream reads return only
 * events of transactions below the visibility horizon (every older transaction has ended), so a
 * reader that moves its cursor past a position never later finds an event behind it.
 */
final class EventReader {

    // The reads are functions of schema version 9: their plans walk the index that orders each read
    // whatever the tables' size or statistics when a plan was made (a statement prepared here would be
    // planned once by the server and kept; see V9__reads_that_walk_their_index.sql).
    private static final String COLUMNS = """
            SELECT global_position, tx_id::text, event_id, stream_name, stream_version, event_type,
                   data::text, metadata::text, causation_id, correlation_id, created_at
            """;

    private static final String GLOBAL = COLUMNS + " FROM %s.read_events_global(?, ?::text::xid8, ?, ?, ?, ?, ?)";

    private static final String STREAM = COLUMNS + " FROM %s.read_events_stream(?, ?, ?, ?)";

    private static final String HEAD = "SELECT %s.read_head()";

    private static final String HORIZON = """
            SELECT %s.count_hidden_events(),
                   COALESCE((SELECT extract(epoch FROM clock_timestamp() - min(a.xact_start))
                               FROM pg_stat_activity a WHERE a.backend_xid IS NOT NULL), 0)
            """;

    private final DataSource dataSource;
    private final String schema;
    private final String global;
    private final String stream;
    private final String head;
    private final String horizon;

    EventReader(DataSource dataSource, String schema) {
        this.dataSource = dataSource;
        this.schema = schema;
        String q = Schema.quote(schema);
        global = GLOBAL.formatted(q);
        stream = STREAM.formatted(q);
        head = HEAD.formatted(q);
        horizon = HORIZON.formatted(q);
    }

    List<RecordedEvent> all(boolean forward, GlobalPosition from, int limit, Partition partition) {
        return global(null, forward, from, limit, partition);
    }

    List<RecordedEvent> category(String category, boolean forward, GlobalPosition from, int limit,
            Partition partition) {
        requireCategory(category);
        return global(category, forward, from, limit, partition);
    }

    private List<RecordedEvent> global(String category, boolean forward, GlobalPosition from, int limit,
            Partition partition) {
        requireCursor(from);
        requireLimit(limit);
        if (partition == null) {
            throw new InvalidInputException("partition must not be null (use Partition.WHOLE)");
        }
        boolean partitioned = !partition.isWhole();
        String action = category == null ? "read all streams" : "read category '" + category + "'";
        return query(action + (partitioned ? " as member " + partition : ""), global, statement -> {
            statement.setBoolean(1, forward);
            statement.setString(2, Long.toString(from.transaction()));
            statement.setLong(3, from.sequence());
            statement.setString(4, category);
            if (partitioned) {
                statement.setInt(5, partition.size());
                statement.setInt(6, partition.member());
            } else {
                statement.setNull(5, Types.INTEGER);
                statement.setNull(6, Types.INTEGER);
            }
            statement.setInt(7, limit);
        }, limit);
    }

    List<RecordedEvent> stream(String stream, boolean forward, long fromVersion, int limit) {
        StreamNames.requireWellFormed(stream);
        requireLimit(limit);
        return query("read stream '" + stream + "'", this.stream, statement -> {
            statement.setString(1, stream);
            statement.setBoolean(2, forward);
            statement.setLong(3, fromVersion);
            statement.setInt(4, limit);
        }, limit);
    }

    GlobalPosition head() {
        try (Connection connection = dataSource.getConnection();
                PreparedStatement statement = connection.prepareStatement(head);
                ResultSet rs = statement.executeQuery()) {
            rs.next();
            return position(rs.getArray(1));
        } catch (SQLException e) {
            throw SqlErrors.translate(e, "read the head position", schema);
        }
    }

    /** The position {@code read_head()} returned: {tx_id, global_position} as text, or null for none. */
    static GlobalPosition position(java.sql.Array array) throws SQLException {
        if (array == null) {
            return GlobalPosition.START;
        }
        String[] position = (String[]) array.getArray();
        return new GlobalPosition(Long.parseLong(position[0]), Long.parseLong(position[1]));
    }

    Horizon horizon() {
        try (Connection connection = dataSource.getConnection();
                PreparedStatement statement = connection.prepareStatement(horizon);
                ResultSet rs = statement.executeQuery()) {
            rs.next();
            return new Horizon(rs.getLong(1), Duration.ofNanos((long) (rs.getDouble(2) * 1e9)));
        } catch (SQLException e) {
            throw SqlErrors.translate(e, "read the visibility horizon", schema);
        }
    }

    private interface Binder {
        void bind(PreparedStatement statement) throws SQLException;
    }

    private List<RecordedEvent> query(String action, String sql, Binder binder, int limit) {
        try (Connection connection = dataSource.getConnection();
                PreparedStatement statement = connection.prepareStatement(sql)) {
            binder.bind(statement);
            List<RecordedEvent> events = new ArrayList<>(Math.min(limit, 1024));
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    events.add(map(rs));
                }
            }
            return events;
        } catch (SQLException e) {
            throw SqlErrors.translate(e, action, schema);
        }
    }

    private static RecordedEvent map(ResultSet rs) throws SQLException {
        return new RecordedEvent(
                rs.getObject(3, UUID.class),
                rs.getString(4),
                rs.getLong(5),
                new GlobalPosition(Long.parseLong(rs.getString(2)), rs.getLong(1)),
                rs.getString(6),
                rs.getString(7),
                rs.getString(8),
                rs.getObject(9, UUID.class),
                rs.getObject(10, UUID.class),
                rs.getObject(11, OffsetDateTime.class).toInstant());
    }

    private static void requireLimit(int limit) {
        if (limit < 1) {
            throw new InvalidInputException("read limit must be >= 1, got " + limit);
        }
    }

    private static void requireCursor(GlobalPosition position) {
        if (position == null) {
            throw new InvalidInputException("read position must not be null (use GlobalPosition.START or END)");
        }
    }

    private static void requireCategory(String category) {
        if (category == null || Utf16.isBlank(category) || category.indexOf('-') >= 0) {
            // no stream can have such a category (see StreamNames): a read of it is a mistake
            throw new InvalidInputException("category must contain a visible character and contain no '-', got "
                    + (category == null ? "null" : "'" + Utf16.shown(category, 80) + "'"));
        }
    }
}
