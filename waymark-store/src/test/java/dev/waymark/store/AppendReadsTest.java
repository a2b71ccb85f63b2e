package dev.waymark.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
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
    static final PostgresExtension POSTGRES = new PostgresExtension();

    private static final int BULK_ROWS = 20_000;
    private static final int PLANNED_APPENDS = 6; // the plan cache switches from custom to generic plans at the sixth call
    private static final int MEASURED_APPENDS = 4;

    private static EventStore store;

    @BeforeAll
    static void setUp() {
        store = StoreFixture.migratedStore(POSTGRES);
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    @Test
    void an_append_reads_only_its_own_streams_rows_however_large_the_tables_grew() throws Exception {
        List<String> streams = List.of("reads-a", "reads-b", "reads-c");
        store.append("reads-a", ExpectedVersion.any(), StoreFixture.event("Seeded"));
        execute("ANALYZE waymark.events, waymark.streams"); // as autovacuum does early on: tiny tables
        long rowsRead = 0;
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            for (int k = 0; k < PLANNED_APPENDS + MEASURED_APPENDS; k++) {
                if (k == PLANNED_APPENDS) { // the connection's plans were made on small tables: grow them now
                    execute("INSERT INTO waymark.streams (stream_name, category, stream_hash)"
                            + " SELECT 'bulk-' || g, 'bulk', 0 FROM generate_series(1, " + BULK_ROWS + ") g");
                    execute("INSERT INTO waymark.events"
                            + " (event_id, stream_id, stream_version, category, event_type, data, created_at)"
                            + " SELECT gen_random_uuid(), -1, g, 'bulk', 'Bulk', '{}', now()"
                            + " FROM generate_series(1, " + BULK_ROWS + ") g");
                }
                long before = rowsRead(c); // a read: the transaction has no xid yet, as an append wants
                store.append(c, streams.get(k % streams.size()), ExpectedVersion.any(), StoreFixture.events(2));
                if (k >= PLANNED_APPENDS) {
                    rowsRead += rowsRead(c) - before;
                }
                c.commit();
            }
        }
        assertThat(rowsRead).isLessThan(BULK_ROWS / 10);
        assertThat(StoreFixture.count(POSTGRES.dataSource(),
                "SELECT count(*) FROM waymark.events WHERE category = 'reads'")).isEqualTo(1 + 2L * (PLANNED_APPENDS + MEASURED_APPENDS));
    }

    /**
     * Rows of the stream and event tables this connection fetched by sequential or index scans and
     * has not yet reported to the statistics collector (it reports when idle, never inside a transaction).
     */
    private static long rowsRead(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))"
                        + " FROM pg_stat_xact_user_tables WHERE relid IN ('waymark.events'::regclass,"
                        + " 'waymark.streams'::regclass)")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void execute(String sql) throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
