package dev.waymark.store.internal;

import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Horizon;
import dev.waymark.store.InvalidInputException;
import dev.waymark.store.Partition;
import dev.waymark.store.RecordedEvent;
import dev.waymark.store.StreamNames;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
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

    private static final String COLUMNS = """
            SELECT e.global_position, e.tx_id::text, e.event_id, s.stream_name, e.stream_version, e.event_type,
                   e.data::text, e.metadata::text, e.causation_id, e.correlation_id, e.created_at
            """;

    private static final String GLOBAL = COLUMNS + """
              FROM %1$s.events e JOIN %1$s.streams s ON s.stream_id = e.stream_id
             WHERE (e.tx_id, e.global_position) %2$s (?::text::xid8, ?)
               AND e.tx_id < pg_snapshot_xmin(pg_current_snapshot())
               %3$s
             ORDER BY e.tx_id %4$s, e.global_position %4$s
             LIMIT ?
            """;

    private static final String STREAM = COLUMNS + """
              FROM %1$s.streams s JOIN %1$s.events e ON e.stream_id = s.stream_id
             WHERE s.stream_name = ? AND s.deleted_at IS NULL AND e.stream_version %2$s ?
             ORDER BY e.stream_version %3$s
             LIMIT ?
            """;

    private static final String HEAD = """
            SELECT e.tx_id::text, e.global_position FROM %s.events e
             WHERE e.tx_id < pg_snapshot_xmin(pg_current_snapshot())
             ORDER BY e.tx_id DESC, e.global_position DESC
             LIMIT 1
            """;

    private static final String HORIZON = """
            SELECT (SELECT count(*) FROM %s.events e WHERE e.tx_id >= pg_snapshot_xmin(pg_current_snapshot())),
                   COALESCE((SELECT extract(epoch FROM clock_timestamp() - min(a.xact_start))
                               FROM pg_stat_activity a WHERE a.backend_xid IS NOT NULL), 0)
            """;

    private final DataSource dataSource;
    private final String schema;
    /** Indexed by {@link #globalIndex}: forward/backward x all/category x whole/partitioned. */
    private final String[] global = new String[8];
    private final String streamForward;
    private final String streamBackward;
    private final String head;
    private final String horizon;

    EventReader(DataSource dataSource, String schema) {
        this.dataSource = dataSource;
        this.schema = schema;
        String q = Schema.quote(schema);
        for (int i = 0; i < global.length; i++) {
            boolean forward = (i & 1) == 0;
            boolean category = (i & 2) != 0;
            boolean partitioned = (i & 4) != 0;
            String filter = (category ? "AND e.category = ? " : "")
                    + (partitioned ? "AND ((s.stream_hash % ?) + ?) % ? = ?" : "");
            global[i] = GLOBAL.formatted(q, forward ? ">" : "<", filter, forward ? "ASC" : "DESC");
        }
        streamForward = STREAM.formatted(q, ">", "ASC");
        streamBackward = STREAM.formatted(q, "<", "DESC");
        head = HEAD.formatted(q);
        horizon = HORIZON.formatted(q);
    }

    List<RecordedEvent> all(boolean forward, GlobalPosition from, int limit, Partition partition) {
        return global(null, forward, from, limit, partition);
    }

    List<RecordedEvent> category(String category, boolean forward, GlobalPosition from, int limit, Partition partition) {
        requireCategory(category);
        return global(category, forward, from, limit, partition);
    }

    private static int globalIndex(boolean forward, boolean category, boolean partitioned) {
        return (forward ? 0 : 1) | (category ? 2 : 0) | (partitioned ? 4 : 0);
    }

    private List<RecordedEvent> global(String category, boolean forward, GlobalPosition from, int limit,
            Partition partition) {
        requireCursor(from);
        requireLimit(limit);
        if (partition == null) {
            throw new InvalidInputException("partition must not be null (use Partition.WHOLE)");
        }
        boolean partitioned = !partition.isWhole();
        String sql = global[globalIndex(forward, category != null, partitioned)];
        String action = category == null ? "read all streams" : "read category '" + category + "'";
        return query(action + (partitioned ? " as member " + partition : ""), sql, statement -> {
            int i = 1;
            statement.setString(i++, Long.toString(from.transaction()));
            statement.setLong(i++, from.sequence());
            if (category != null) {
                statement.setString(i++, category);
            }
            if (partitioned) {
                statement.setInt(i++, partition.size());
                statement.setInt(i++, partition.size());
                statement.setInt(i++, partition.size());
                statement.setInt(i++, partition.member());
            }
            statement.setInt(i, limit);
        }, limit);
    }

    List<RecordedEvent> stream(String stream, boolean forward, long fromVersion, int limit) {
        StreamNames.requireWellFormed(stream);
        requireLimit(limit);
        return query("read stream '" + stream + "'", forward ? streamForward : streamBackward, statement -> {
            statement.setString(1, stream);
            statement.setLong(2, fromVersion);
            statement.setInt(3, limit);
        }, limit);
    }

    GlobalPosition head() {
        try (Connection connection = dataSource.getConnection();
                PreparedStatement statement = connection.prepareStatement(head);
                ResultSet rs = statement.executeQuery()) {
            return rs.next() ? new GlobalPosition(Long.parseLong(rs.getString(1)), rs.getLong(2)) : GlobalPosition.START;
        } catch (SQLException e) {
            throw SqlErrors.translate(e, "read the head position", schema);
        }
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
        if (category == null || category.isEmpty() || category.indexOf('-') >= 0) {
            throw new InvalidInputException("category must be non-empty and contain no '-', got "
                    + (category == null ? "null" : "'" + category + "'"));
        }
    }
}
