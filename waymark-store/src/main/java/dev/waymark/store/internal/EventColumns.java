package dev.waymark.store.internal;

import dev.waymark.store.EventData;
import dev.waymark.store.StreamAppend;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;

/**
 * The events of appends as the append functions ({@code append_events}, {@code append_batch}) take
 * them: one array per column, every append's events back to back in order.
 */
final class EventColumns {

    private final UUID[] ids;
    private final String[] types;
    private final String[] data;
    private final String[] metadata;
    private final UUID[] causation;
    private final UUID[] correlation;

    private EventColumns(int total) {
        ids = new UUID[total];
        types = new String[total];
        data = new String[total];
        metadata = new String[total];
        causation = new UUID[total];
        correlation = new UUID[total];
    }

    /** The columns of every event of {@code appends}, in order. */
    static EventColumns of(List<StreamAppend> appends) {
        EventColumns columns = new EventColumns(appends.stream().mapToInt(a -> a.events().size()).sum());
        int e = 0;
        for (StreamAppend append : appends) {
            for (EventData event : append.events()) {
                columns.ids[e] = event.eventId();
                columns.types[e] = event.type();
                columns.data[e] = event.data();
                columns.metadata[e] = event.metadata();
                columns.causation[e] = event.causationId();
                columns.correlation[e] = event.correlationId();
                e++;
            }
        }
        return columns;
    }

    /** The event ids, in order. */
    List<UUID> ids() {
        return List.of(ids);
    }

    /**
     * Binds ids, types, data, metadata, causation and correlation ids as the six parameters from
     * {@code first} on ({@code uuid[]}, {@code text[]} three times, {@code uuid[]} twice).
     */
    void bind(PreparedStatement statement, Connection connection, int first) throws SQLException {
        statement.setArray(first, connection.createArrayOf("uuid", ids));
        statement.setArray(first + 1, connection.createArrayOf("text", types));
        statement.setArray(first + 2, connection.createArrayOf("text", data));
        statement.setArray(first + 3, connection.createArrayOf("text", metadata));
        statement.setArray(first + 4, connection.createArrayOf("uuid", causation));
        statement.setArray(first + 5, connection.createArrayOf("uuid", correlation));
    }

    /** The {@code bigint[]} an append function returned, unboxed. */
    static long[] result(PreparedStatement statement) throws SQLException {
        try (ResultSet rs = statement.executeQuery()) {
            rs.next();
            Long[] boxed = (Long[]) rs.getArray(1).getArray();
            long[] out = new long[boxed.length];
            for (int i = 0; i < boxed.length; i++) {
                out[i] = boxed[i];
            }
            return out;
        }
    }
}
