package dev.waymark.store.internal;

import dev.waymark.store.StreamInfo;
import dev.waymark.store.StreamNames;
import dev.waymark.store.plumbing.Schema;
import dev.waymark.store.plumbing.SqlErrors;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.Optional;
import javax.sql.DataSource;

/** Stream information, soft delete and undelete. */
final class StreamLifecycle {

    // read_stream_info (schema version 9) probes the name's index whatever its plan's age.
    private static final String INFO = "SELECT stream_name, category, version, created_at, deleted_at"
            + " FROM %s.read_stream_info(?)";
    private static final String SET_DELETED = "SELECT %s.set_stream_deleted(?, ?)";

    private final DataSource dataSource;
    private final String schema;
    private final String info;
    private final String setDeleted;

    StreamLifecycle(DataSource dataSource, String schema) {
        this.dataSource = dataSource;
        this.schema = schema;
        this.info = INFO.formatted(Schema.quote(schema));
        this.setDeleted = SET_DELETED.formatted(Schema.quote(schema));
    }

    Optional<StreamInfo> info(String stream) {
        StreamNames.requireWellFormed(stream);
        try (Connection connection = dataSource.getConnection();
                PreparedStatement statement = connection.prepareStatement(info)) {
            statement.setString(1, stream);
            try (ResultSet rs = statement.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                OffsetDateTime deleted = rs.getObject(5, OffsetDateTime.class);
                return Optional.of(new StreamInfo(rs.getString(1), rs.getString(2), rs.getLong(3),
                        rs.getObject(4, OffsetDateTime.class).toInstant(),
                        Optional.ofNullable(deleted).map(OffsetDateTime::toInstant)));
            }
        } catch (SQLException e) {
            throw SqlErrors.translate(e, "read stream info of '" + stream + "'", schema);
        }
    }

    java.util.List<StreamInfo> list(String category, String afterName, int limit) {
        if (limit < 1) {
            throw new dev.waymark.store.InvalidInputException("limit must be >= 1, got " + limit);
        }
        // A plain statement: a listing of one category is served best by a cost-based choice (the category's
        // index and a sort when the category is sparse, the walk in name order when it is common).
        String sql = "SELECT s.stream_name, s.category, COALESCE((SELECT e.stream_version FROM " + Schema.quote(schema)
                + ".events e WHERE e.stream_id = s.stream_id ORDER BY e.stream_version DESC LIMIT 1), 0),"
                + " s.created_at, s.deleted_at FROM " + Schema.quote(schema) + ".streams s WHERE s.stream_name > ?"
                + (category == null ? "" : " AND s.category = ?") + " ORDER BY s.stream_name LIMIT ?";
        try (Connection connection = dataSource.getConnection();
                PreparedStatement statement = connection.prepareStatement(sql)) {
            int i = 1;
            statement.setString(i++, afterName == null ? "" : afterName);
            if (category != null) {
                statement.setString(i++, category);
            }
            statement.setInt(i, limit);
            java.util.List<StreamInfo> out = new java.util.ArrayList<>();
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    OffsetDateTime deleted = rs.getObject(5, OffsetDateTime.class);
                    out.add(new StreamInfo(rs.getString(1), rs.getString(2), rs.getLong(3),
                            rs.getObject(4, OffsetDateTime.class).toInstant(),
                            Optional.ofNullable(deleted).map(OffsetDateTime::toInstant)));
                }
            }
            return out;
        } catch (SQLException e) {
            throw SqlErrors.translate(e, "list streams", schema);
        }
    }

    boolean setDeleted(String stream, boolean deleted) {
        StreamNames.requireValid(stream);
        try (Connection connection = dataSource.getConnection();
                PreparedStatement statement = connection.prepareStatement(setDeleted)) {
            statement.setString(1, stream);
            statement.setBoolean(2, deleted);
            boolean changed;
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                rs.getLong(1);
                changed = !rs.wasNull();
            }
            if (!connection.getAutoCommit()) {
                connection.commit();
            }
            return changed;
        } catch (SQLException e) {
            throw SqlErrors.translate(e, (deleted ? "delete" : "undelete") + " stream '" + stream + "'", schema);
        }
    }
}
