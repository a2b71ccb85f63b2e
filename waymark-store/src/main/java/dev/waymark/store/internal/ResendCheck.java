package dev.waymark.store.internal;

import dev.waymark.store.EventData;
import dev.waymark.store.StreamAppend;
import dev.waymark.store.plumbing.Schema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;

/**
 * Tells a resent append from a conflicting one. An append's expected version is checked before
 * its events are inserted, so resending an append that committed (with its own event ids) fails
 * the version check, not the unique event id. Appends are atomic, so the append is known to have
 * committed when every one of its events is stored, each in the stream it was sent to; when only
 * some are, or they are stored elsewhere, another batch took the version and the conflict stands.
 */
final class ResendCheck {

    private static final String STORED_SQL = """
            SELECT count(*)
              FROM unnest(?::uuid[], ?::text[]) AS b(event_id, stream_name)
              JOIN %1$s.events e ON e.event_id = b.event_id
              JOIN %1$s.streams s ON s.stream_id = e.stream_id AND s.stream_name = b.stream_name
            """;

    private final String sql;

    ResendCheck(String schema) {
        this.sql = STORED_SQL.formatted(Schema.quote(schema));
    }

    /**
     * Whether the caller chose every event id of {@code appends}: only then can the same batch be
     * stored already (a generated id is new), so only then is the check worth a query.
     */
    static boolean idsChosenByCaller(List<StreamAppend> appends) {
        return appends.stream().flatMap(a -> a.events().stream()).allMatch(e -> e.eventId() != null);
    }

    /**
     * Whether every event of {@code prepared} is stored in its stream. Runs on {@code connection}
     * after the failed append rolled back; leaves no transaction open on it.
     */
    boolean alreadyStored(Connection connection, List<StreamAppend> prepared) throws SQLException {
        int total = prepared.stream().mapToInt(a -> a.events().size()).sum();
        UUID[] ids = new UUID[total];
        String[] streams = new String[total];
        int i = 0;
        for (StreamAppend append : prepared) {
            for (EventData event : append.events()) {
                ids[i] = event.eventId();
                streams[i] = append.streamName();
                i++;
            }
        }
        long stored;
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setArray(1, connection.createArrayOf("uuid", ids));
            statement.setArray(2, connection.createArrayOf("text", streams));
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                stored = rs.getLong(1);
            }
        } finally {
            if (!connection.getAutoCommit()) {
                connection.rollback();
            }
        }
        return stored == total;
    }
}
