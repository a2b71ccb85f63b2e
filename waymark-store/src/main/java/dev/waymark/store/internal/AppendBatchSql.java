package dev.waymark.store.internal;

import dev.waymark.store.AppendResult;
import dev.waymark.store.EventData;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.StreamAppend;
import dev.waymark.store.plumbing.Schema;
import dev.waymark.store.plumbing.SqlErrors;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The statement of a group commit: one call of {@code append_batch} (the store's schema, which
 * describes the encoding) for many appends, each with its own outcome.
 */
final class AppendBatchSql {

    private static final String SQL = """
            SELECT %s.append_batch(?::text[], ?::integer[], ?::integer[], ?::bigint[], ?::integer[],
                                   ?::timestamptz[], ?::integer[], ?::uuid[], ?::text[], ?::text[]::jsonb[],
                                   ?::text[]::jsonb[], ?::uuid[], ?::uuid[], ?::uuid[])
            """;

    /**
     * One append of a batch: validated, with its event ids, and its events' timestamp;
     * {@code idsChosenByCaller} when the caller gave event ids (only those can already be stored).
     */
    record Item(List<StreamAppend> prepared, OffsetDateTime createdAt, boolean idsChosenByCaller) {}

    /** What became of one append of a batch. */
    sealed interface Outcome {}

    /** Written; the results in the append's stream order. */
    record Written(List<AppendResult> results) implements Outcome {}

    /**
     * A condition failed; nothing of the append was written.
     *
     * @param sqlState the SQLSTATE {@code append_events} raises for it (WM010, WM011, WM012)
     * @param index the failing stream's index in the append
     * @param actual the stream's version, or -1 when it does not exist
     */
    record Conflict(String sqlState, int index, long actual, boolean deleted) implements Outcome {}

    /** Not written, for a stream lock held elsewhere or an event id already stored: append it alone. */
    record NotTried() implements Outcome {}

    private static final NotTried NOT_TRIED = new NotTried();

    private final String sql;

    AppendBatchSql(String schema) {
        this.sql = SQL.formatted(Schema.quote(schema));
    }

    /** Runs the batch on {@code connection} (the caller commits); outcomes in the order of {@code items}. */
    List<Outcome> execute(Connection connection, List<Item> items) throws SQLException {
        Map<String, Integer> names = new LinkedHashMap<>();
        List<StreamAppend> appends = new ArrayList<>();
        for (Item item : items) {
            for (StreamAppend append : item.prepared()) {
                names.putIfAbsent(append.streamName(), names.size() + 1);
                appends.add(append);
            }
        }
        int slots = appends.size();
        Integer[] itemSlots = new Integer[items.size()];
        Integer[] slotName = new Integer[slots];
        Long[] expected = new Long[slots];
        Integer[] counts = new Integer[slots];
        OffsetDateTime[] created = new OffsetDateTime[slots];
        List<Integer> eventSlot = new ArrayList<>();
        List<UUID> checkIds = new ArrayList<>();
        int s = 0;
        for (int i = 0; i < items.size(); i++) {
            Item item = items.get(i);
            itemSlots[i] = item.prepared().size();
            for (StreamAppend append : item.prepared()) {
                slotName[s] = names.get(append.streamName());
                expected[s] = Appender.encode(append.expected());
                counts[s] = append.events().size();
                created[s] = item.createdAt();
                s++;
                for (EventData event : append.events()) {
                    eventSlot.add(s);
                    if (item.idsChosenByCaller()) {
                        checkIds.add(event.eventId());
                    }
                }
            }
        }
        long[] out;
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setArray(1, connection.createArrayOf("text", names.keySet().toArray(String[]::new)));
            statement.setArray(2, connection.createArrayOf("int4", itemSlots));
            statement.setArray(3, connection.createArrayOf("int4", slotName));
            statement.setArray(4, connection.createArrayOf("int8", expected));
            statement.setArray(5, connection.createArrayOf("int4", counts));
            statement.setArray(6, connection.createArrayOf("timestamptz", created));
            statement.setArray(7, connection.createArrayOf("int4", eventSlot.toArray(Integer[]::new)));
            EventColumns.of(appends).bind(statement, connection, 8);
            // null when no caller chose ids: the batch then looks none up
            statement.setArray(14, checkIds.isEmpty()
                    ? null
                    : connection.createArrayOf("uuid", checkIds.toArray(UUID[]::new)));
            out = EventColumns.result(statement);
        }
        if (out.length != 1 + items.size() + 3 * slots) {
            throw new IllegalStateException("append_batch returned " + out.length + " values for " + items.size()
                    + " appends of " + slots + " streams");
        }
        return decode(out, items);
    }

    private static List<Outcome> decode(long[] out, List<Item> items) {
        long tx = out[0];
        List<Outcome> outcomes = new ArrayList<>(items.size());
        int at = 1;
        for (Item item : items) {
            int status = (int) out[at];
            List<StreamAppend> appends = item.prepared();
            outcomes.add(switch (status) {
                case 0 -> {
                    List<AppendResult> results = new ArrayList<>(appends.size());
                    for (int k = 0; k < appends.size(); k++) {
                        int v = at + 1 + 3 * k;
                        StreamAppend append = appends.get(k);
                        results.add(new AppendResult(append.streamName(), out[v], new GlobalPosition(tx, out[v + 1]),
                                new GlobalPosition(tx, out[v + 2]),
                                append.events().stream().map(EventData::eventId).toList()));
                    }
                    yield new Written(results);
                }
                case 1, 2, 3 -> new Conflict(switch (status) {
                    case 1 -> SqlErrors.WRONG_VERSION;
                    case 2 -> SqlErrors.STREAM_NOT_FOUND;
                    default -> SqlErrors.STREAM_EXISTS;
                }, (int) out[at + 1], out[at + 2], out[at + 3] == 1);
                case 4, 5 -> NOT_TRIED;
                default -> throw new IllegalStateException("append_batch returned status " + status);
            });
            at += 1 + 3 * appends.size();
        }
        return outcomes;
    }
}
