package dev.waymark.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.testkit.OneConnection;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What an append reads of the stream and event tables: its own streams' rows, by key, however much
 * the tables grew after the session planned its statements on small ones (a session keeps a
 * PL/pgSQL plan until the next ANALYZE of a table the plan reads, which autovacuum runs only after a
 * table grew by a tenth, at most once a minute).
 */
class AppendReadsTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    private static final int BULK_ROWS = 20_000;
    private static final int PLANNED_APPENDS = 6; // the plan cache switches from custom to generic plans at the sixth call
    private static final int MEASURED_APPENDS = 4;

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
    void an_append_reads_only_its_own_streams_rows_however_large_the_tables_grew() throws Exception {
        List<String> streams = List.of("reads-a", "reads-b", "reads-c");
        store.append("reads-a", ExpectedVersion.any(), StoreFixture.event("Seeded"));
        // as autovacuum does early on: statistics of tiny tables
        StoreFixture.execute(POSTGRES.dataSource(), "ANALYZE waymark.events, waymark.streams");
        long rowsRead = 0;
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            for (int k = 0; k < PLANNED_APPENDS + MEASURED_APPENDS; k++) {
                if (k == PLANNED_APPENDS) { // the connection's plans were made on small tables: grow them now
                    StoreFixture.execute(POSTGRES.dataSource(),
                            "INSERT INTO waymark.streams (stream_name, category, stream_hash)"
                                    + " SELECT 'bulk-' || g, 'bulk', 0 FROM generate_series(1, " + BULK_ROWS + ") g");
                    StoreFixture.execute(POSTGRES.dataSource(), "INSERT INTO waymark.events"
                            + " (event_id, stream_id, stream_version, category, event_type, data, created_at)"
                            + " SELECT gen_random_uuid(), -1, g, 'bulk', 'Bulk', '{}', now()"
                            + " FROM generate_series(1, " + BULK_ROWS + ") g");
                }
                // a read: the transaction has no xid yet, as an append wants
                long before = OneConnection.rowsRead(c, "waymark.events", "waymark.streams");
                store.append(c, streams.get(k % streams.size()), ExpectedVersion.any(), StoreFixture.events(2));
                if (k >= PLANNED_APPENDS) {
                    rowsRead += OneConnection.rowsRead(c, "waymark.events", "waymark.streams") - before;
                }
                c.commit();
            }
        }
        assertThat(rowsRead).isLessThan(BULK_ROWS / 10);
        assertThat(StoreFixture.count(POSTGRES.dataSource(),
                "SELECT count(*) FROM waymark.events WHERE category = 'reads'"))
                .isEqualTo(1 + 2L * (PLANNED_APPENDS + MEASURED_APPENDS));
    }
}
