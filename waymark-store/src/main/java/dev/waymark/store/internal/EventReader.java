package dev.waymark.store.internal;

import dev.waymark.store.GlobalPosition;
import dev.waymark.store.InvalidInputException;
import dev.waymark.store.RecordedEvent;
import dev.waymark.store.StreamNames;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
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

    private final DataSource dataSource;
    private final String schema;
    private final String allForward;
    private final String allBackward;
    private final String categoryForward;
    private final String categoryBackward;
    private final String streamForward;
    private final String streamBackward;
    private final String head;

    EventReader(DataSource dataSource, String schema) {
        this.dataSource = dataSource;
        this.schema = schema;
        String q = Schema.quote(schema);
        allForward = GLOBAL.formatted(q, ">", "", "ASC");
        allBackward = GLOBAL.formatted(q, "<", "", "DESC");
        categoryForward = GLOBAL.formatted(q, ">", "AND e.category = ?", "ASC");
        categoryBackward = GLOBAL.formatted(q, "<", "AND e.category = ?", "DESC");
        streamForward = STREAM.formatted(q, ">", "ASC");
        streamBackward = STREAM.formatted(q, "<", "DESC");
        head = HEAD.formatted(q);
    }

    List<RecordedEvent> all(boolean forward, GlobalPosition from, int limit) {
        requireCursor(from);
        requireLimit(limit);
        return query("read all streams", forward ? allForward : allBackward, statement -> {
            statement.setString(1, Long.toString(from.transaction()));
            statement.setLong(2, from.sequence());
            statement.setInt(3, limit);
        }, limit);
    }

    List<RecordedEvent> category(String category, boolean forward, GlobalPosition from, int limit) {
        requireCategory(category);
        requireCursor(from);
        requireLimit(limit);
        return query("read category '" + category + "'", forward ? categoryForward : categoryBackward, statement -> {
            statement.setString(1, Long.toString(from.transaction()));
            statement.setLong(2, from.sequence());
            statement.setString(3, category);
            statement.setInt(4, limit);
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
