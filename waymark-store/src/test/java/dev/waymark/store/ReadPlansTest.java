package dev.waymark.store;

import dev.waymark.testkit.OneConnection;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a read of a page reads of the stream and event tables (rows, and blocks of the event
 * indexes): about the page, from the start, the end or a cursor deep inside, however much the tables
 * grew after the session first ran the read on small ones. (A server-prepared statement keeps its
 * generic plan until the next ANALYZE of a table it reads; autovacuum runs that only after a table
 * grew by a tenth, at most once a minute.)
 */
class ReadPlansTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    private static final int BULK_ROWS = 20_000;
    private static final int PAGE = 100;
    // a page's walk down and along one index: 2 to 5 blocks measured; a category page that filtered the
    // 10,000 entries before its cursor inside the index instead of starting there: 92
    private static final int MAX_INDEX_BLOCKS = 20;
    // pgjdbc prepares on the server at the fifth execution; the server plans generically from its sixth
    private static final int EARLY_READS = 12;

    private static EventStore store;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    @Test
    void a_page_of_a_read_costs_about_the_page_however_large_the_tables_grew() throws Exception {
        for (int i = 0; i < 30; i++) {
            store.append("bulk-" + i, ExpectedVersion.any(), StoreFixture.event("Seeded"));
        }
        // as autovacuum does early on: statistics of tiny tables
        StoreFixture.execute(POSTGRES.dataSource(), "ANALYZE waymark.events, waymark.streams");
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            try (EventStore reader = EventStore.builder(OneConnection.dataSource(c)).build()) {
                // cursors deep inside the tables once they have grown: a page from there reads about the page too,
                // and a lag count after a cursor near the end counts about the lag
                GlobalPosition[] middle = {GlobalPosition.START};
                GlobalPosition[] nearEnd = {GlobalPosition.START};
                Map<String, Supplier<List<?>>> reads = new LinkedHashMap<>();
                reads.put("all forward", () -> reader.readAllForward(GlobalPosition.START, PAGE));
                reads.put("all backward", () -> reader.readAllBackward(GlobalPosition.END, PAGE));
                reads.put("category forward", () -> reader.readCategoryForward("bulk", GlobalPosition.START, PAGE));
                reads.put("category backward", () -> reader.readCategoryBackward("bulk", GlobalPosition.END, PAGE));
                reads.put("stream forward", () -> reader.readStreamForward("bulk-0", 0, PAGE));
                reads.put("stream backward", () -> reader.readStreamBackward("bulk-0", Long.MAX_VALUE, PAGE));
                reads.put("partition forward", () -> reader.readAllForward(GlobalPosition.START, PAGE,
                        Partition.of(StreamNames.member("bulk-0", 2), 2)));
                reads.put("all forward from the middle", () -> reader.readAllForward(middle[0], PAGE));
                reads.put("all backward from the middle", () -> reader.readAllBackward(middle[0], PAGE));
                reads.put("category forward from the middle",
                        () -> reader.readCategoryForward("bulk", middle[0], PAGE));
                reads.put("category backward from the middle",
                        () -> reader.readCategoryBackward("bulk", middle[0], PAGE));
                reads.put("stream forward from the middle",
                        () -> reader.readStreamForward("bulk-0", BULK_ROWS / 2, PAGE));
                reads.put("stream info", () -> reader.streamInfo("bulk-0").stream().toList());
                // what SubscriptionLag.measure (waymark-subscription) counts, after a cursor near the end
                reads.put("lag of all streams", () -> countAfter(c, nearEnd[0], null));
                reads.put("lag of a category", () -> countAfter(c, nearEnd[0], "bulk"));
                reads.put("head", () -> List.of(reader.headPosition()));
                reads.put("horizon", () -> List.of(reader.horizon()));
                for (int k = 0; k < EARLY_READS; k++) {
                    reads.values().forEach(Supplier::get);
                    c.commit();
                }
                // another category's events first, so a category read that walks the global order finds them in its way
                StoreFixture.execute(POSTGRES.dataSource(), "INSERT INTO waymark.streams"
                        + " (stream_name, category, stream_hash) SELECT 'other-' || g, 'other', waymark.stream_hash('other-' || g)"
                        + " FROM generate_series(1, " + BULK_ROWS + ") g");
                StoreFixture.execute(POSTGRES.dataSource(), "INSERT INTO waymark.events"
                        + " (event_id, stream_id, stream_version, category, event_type, data, created_at)"
                        + " SELECT gen_random_uuid(), s.stream_id, 1, 'other', 'Other', '{}', now()"
                        + " FROM waymark.streams s WHERE s.category = 'other' ORDER BY s.stream_id");
                StoreFixture.execute(POSTGRES.dataSource(), "INSERT INTO waymark.events"
                        + " (event_id, stream_id, stream_version, category, event_type, data, created_at)"
                        + " SELECT gen_random_uuid(), s.stream_id, 1 + g, 'bulk', 'Bulk', '{}', now()"
                        + " FROM generate_series(1, " + BULK_ROWS
                        + ") g, waymark.streams s WHERE s.stream_name = 'bulk-0'");
                middle[0] = bulkPosition(BULK_ROWS / 2);
                nearEnd[0] = bulkPosition(BULK_ROWS - 10);
                SoftAssertions softly = new SoftAssertions();
                for (Map.Entry<String, Supplier<List<?>>> read : reads.entrySet()) {
                    long before = OneConnection.rowsRead(c, "waymark.events", "waymark.streams");
                    long blocksBefore = OneConnection.indexBlocksFetched(c, "waymark.events");
                    softly.assertThat(read.getValue().get()).as(read.getKey()).isNotEmpty();
                    softly.assertThat(OneConnection.rowsRead(c, "waymark.events", "waymark.streams") - before)
                            .as("rows read by " + read.getKey()).isLessThan(BULK_ROWS / 10);
                    softly.assertThat(OneConnection.indexBlocksFetched(c, "waymark.events") - blocksBefore)
                            .as("event index blocks fetched by " + read.getKey()).isLessThan(MAX_INDEX_BLOCKS);
                    c.commit();
                }
                softly.assertAll();
            }
        }
    }

    /** The position of bulk-0's event at {@code version}, read on a connection of its own. */
    private static GlobalPosition bulkPosition(long version) throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT tx_id::text, global_position FROM waymark.events"
                        + " WHERE stream_version = " + version + " AND category = 'bulk'")) {
            rs.next();
            return new GlobalPosition(Long.parseLong(rs.getString(1)), rs.getLong(2));
        }
    }

    private static List<Long> countAfter(Connection c, GlobalPosition after, String category) {
        try (PreparedStatement p = c
                .prepareStatement("SELECT events FROM waymark.count_events_after(?::text::xid8, ?, ?, NULL, NULL)")) {
            p.setString(1, Long.toString(after.transaction()));
            p.setLong(2, after.sequence());
            p.setString(3, category);
            try (ResultSet rs = p.executeQuery()) {
                rs.next();
                return List.of(rs.getLong(1));
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
